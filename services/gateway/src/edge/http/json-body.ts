import express from 'express';
import type { RequestHandler } from 'express';
import {
  MAX_JSON_DEPTH,
  tooDeeplyNested,
  unstorableTextViolations,
  validationError,
} from '@marketplace/platform';
import { HttpProblem } from './problem.js';
import { WHOLE_INPUT } from '../schemas/validate.js';

const JSON_TYPES = ['application/json', 'application/*+json'];

export interface JsonBodyOptions {
  /**
   * Whether every string and key of the body must be text PostgreSQL can store (400 naming each field
   * otherwise). The MCP routes turn it off: the dispatcher checks a tool's arguments, so an agent gets the
   * tool's own invalid-arguments answer.
   */
  readonly checkText?: boolean;
  /** A request without a body (no Content-Length, or 0) is let through with `req.body` undefined. */
  readonly optional?: boolean;
}

/**
 * Hostile JSON is refused once, here, for every route (docs/security.md, "Hostile input"): nesting deeper than
 * MAX_JSON_DEPTH and, unless the route checks it itself, text with a NUL or a lone surrogate.
 */
const refuseHostileJson =
  ({ checkText = true }: JsonBodyOptions): RequestHandler =>
  (req, _res, next) => {
    const deepField = tooDeeplyNested(req.body);
    if (deepField !== undefined) {
      const message = `nests deeper than ${MAX_JSON_DEPTH} arrays and objects`;
      throw validationError(`invalid body: ${deepField || WHOLE_INPUT} ${message}`, [
        { path: deepField || WHOLE_INPUT, message },
      ]);
    }
    const violations = checkText
      ? unstorableTextViolations(req.body).map((violation) => ({
          ...violation,
          path: violation.path || WHOLE_INPUT,
        }))
      : [];
    if (violations.length > 0) {
      throw validationError(
        `invalid body: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
        violations,
      );
    }
    next();
  };

/**
 * For routes that take a body: a body in any other media type is 415 (before reading it), then the JSON parser
 * reads at most `limitBytes` (413 beyond; counted after decompression) and rejects malformed JSON (400), then
 * hostile JSON is refused (400 naming the field).
 */
export const jsonBody = (limitBytes: number, options: JsonBodyOptions = {}): RequestHandler[] => [
  (req, _res, next) => {
    const empty =
      req.headers['transfer-encoding'] === undefined && (req.headers['content-length'] ?? '0') === '0';
    if (options.optional === true && empty) return next();
    if (!req.is(JSON_TYPES)) {
      throw new HttpProblem('unsupported-media-type', 'send the request body as application/json');
    }
    next();
  },
  // Any JSON value parses; the route's schema then says precisely what it expected (an object, usually).
  express.json({ limit: limitBytes, type: JSON_TYPES, strict: false }),
  refuseHostileJson(options),
];

/** A request that carries a body (RFC 9110 8.6: a length above zero, or a chunked one). */
const carriesBody = (headers: Record<string, string | string[] | undefined>): boolean =>
  headers['transfer-encoding'] !== undefined ||
  (headers['content-length'] !== undefined && headers['content-length'] !== '0');

/** `jsonBody` for routes whose body is optional: a request without one goes on with `req.body` undefined. */
export const optionalJsonBody = (limitBytes: number, options: JsonBodyOptions = {}): RequestHandler => {
  const parse = express.Router().use(...jsonBody(limitBytes, options));
  return (req, res, next) => {
    if (carriesBody(req.headers)) parse(req, res, next);
    else next();
  };
};
