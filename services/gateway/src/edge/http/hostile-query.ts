import type { RequestHandler } from 'express';
import { unstorableTextViolations, validationError } from '@marketplace/platform';

/**
 * A query parameter PostgreSQL could not store (a `%00`: percent-decoding already turns invalid UTF-8 into
 * U+FFFD) is 400 naming the parameter, on every route at once (docs/security.md, "Hostile input"). Path
 * parameters need nothing here: each route matches its ids against a pattern that has no room for them.
 */
export const refuseHostileQuery: RequestHandler = (req, _res, next) => {
  const violations = unstorableTextViolations(req.query).map((violation) => ({
    ...violation,
    // A repeated parameter is a list: name the parameter, not its position.
    path: violation.path.replace(/\/\d+$/, ''),
  }));
  if (violations.length > 0) {
    throw validationError(
      `invalid query: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
      violations,
    );
  }
  next();
};
