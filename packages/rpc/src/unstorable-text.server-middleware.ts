import { unstorableTextViolations, validationError } from '@marketplace/platform';
import type { CallContext, ServerMiddlewareCall } from 'nice-grpc-common';

/**
 * Defence in depth behind the gateway's edge check (docs/security.md, "Hostile input"): a request message
 * holding a string PostgreSQL cannot store (a NUL, a lone surrogate) is INVALID_ARGUMENT naming each field,
 * whoever the caller, so no service ever writes one. Placed inside the AppError middleware, which maps it.
 */
export async function* unstorableTextServerMiddleware<Request, Response>(
  call: ServerMiddlewareCall<Request, Response>,
  context: CallContext,
): AsyncGenerator<Response, Response | void, undefined> {
  if (!call.requestStream) {
    const violations = unstorableTextViolations(call.request);
    if (violations.length > 0) {
      throw validationError(
        `invalid request: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
        violations,
      );
    }
  }
  return yield* call.next(call.request, context);
}
