import { isAppError, type Logger } from '@marketplace/platform';
import { ServerError, Status, type CallContext, type ServerMiddlewareCall } from 'nice-grpc-common';
import { serverErrorOf } from './app-error-status.js';

/** By name, as nice-grpc does: abort errors come from several libraries and realms. */
const isAbortError = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'name' in error && error.name === 'AbortError';

/**
 * Turns what a service method throws into a gRPC status: an AppError into its status with details, anything
 * unexpected into a bare INTERNAL (logged here, never sent: stack traces and SQL stay on the server). Errors
 * that already are statuses, and cancellations, pass through.
 */
export const createAppErrorServerMiddleware = (logger: Logger) =>
  async function* appErrorServerMiddleware<Request, Response>(
    call: ServerMiddlewareCall<Request, Response>,
    context: CallContext,
  ): AsyncGenerator<Response, Response | void, undefined> {
    try {
      return yield* call.next(call.request, context);
    } catch (error) {
      if (isAppError(error)) {
        logger.debug({ method: call.method.path, kind: error.kind }, error.message);
        throw serverErrorOf(error);
      }
      if (error instanceof ServerError || isAbortError(error)) throw error;
      logger.error({ err: error, method: call.method.path }, 'unexpected error in a gRPC method');
      throw new ServerError(Status.INTERNAL, 'internal error');
    }
  };
