import { ClientError, type CallOptions, type ClientMiddlewareCall } from 'nice-grpc-common';
import { appErrorOf } from './app-error-status.js';

/**
 * Raises the AppError a failed call stands for (same kind, message and field violations as the server's), so
 * callers handle remote failures exactly like local ones. Statuses without a kind stay ClientErrors.
 */
export async function* appErrorClientMiddleware<Request, Response>(
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
): AsyncGenerator<Response, Response | void, undefined> {
  try {
    return yield* call.next(call.request, options);
  } catch (error) {
    const appError = error instanceof ClientError ? appErrorOf(error) : undefined;
    throw appError ?? error;
  }
}
