import { startGrpcClientCall } from '@marketplace/telemetry';
import {
  ClientError,
  Status,
  type CallOptions,
  type ClientMiddlewareCall,
  type Metadata,
} from 'nice-grpc-common';
import type { DeadlineOptions } from 'nice-grpc-client-middleware-deadline';
import { RichClientError } from 'nice-grpc-error-details';
import { appErrorOf } from './app-error-status.js';
import { withInternalToken } from './internal-auth.js';
import { decodeStatusDetails, STATUS_DETAILS_TRAILER } from './status-details.codec.js';

/** The method name of a call's path, `/marketplace.catalog.v1.CatalogService/SearchProducts`. */
const methodNameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

const carriesIdempotencyKey = (request: unknown): boolean => {
  const key = (request as { idempotencyKey?: unknown } | null)?.idempotencyKey;
  return typeof key === 'string' && key !== '';
};

/**
 * Everything a call goes through, in one nice-grpc middleware (one generator per call instead of a chain of
 * six: docs/architecture.md, "How work moves"). From the outside in:
 * - failures arrive as the AppError the server raised (same kind, message and field violations, from the
 *   google.rpc details of `grpc-status-details-bin`); statuses without a kind stay ClientErrors;
 * - the deadline (`{ deadline }`, ms from now or a Date): when it passes the call is cancelled and fails
 *   DEADLINE_EXCEEDED;
 * - a unary call whose first attempt ends UNAVAILABLE (its replica died or is draining; round robin picks
 *   another) is sent once more, within the same deadline, when it changes nothing (`repeatable` methods) or
 *   carries an idempotency key (docs/idempotency.md); a write without a key never is (replica-balancing.ts);
 * - each attempt carries this process's service token (docs/security.md, "Internal calls") and a CLIENT span
 *   whose context it sends as `traceparent`.
 */
export const createClientInterceptor = (repeatable: ReadonlySet<string>) =>
  async function* clientInterceptor<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    options: CallOptions & DeadlineOptions,
  ): AsyncGenerator<Response, Response | void, undefined> {
    const { deadline, signal: callerSignal, ...rest } = options;
    const controller = new AbortController();
    const abort = (): void => controller.abort();
    if (callerSignal?.aborted) abort();
    callerSignal?.addEventListener('abort', abort);
    let timedOut = false;
    const timer =
      deadline == null || callerSignal?.aborted
        ? undefined
        : setTimeout(
            () => {
              timedOut = true;
              abort();
            },
            deadline instanceof Date ? deadline.getTime() - Date.now() : deadline,
          );
    let details: ReturnType<typeof decodeStatusDetails> | undefined;
    const callOptions = (metadata: Metadata): CallOptions => ({
      ...rest,
      metadata,
      signal: controller.signal,
      onTrailer: (trailer) => {
        const encoded = trailer.get(STATUS_DETAILS_TRAILER);
        if (encoded != null) details = decodeStatusDetails(encoded);
        options.onTrailer?.(trailer);
      },
    });
    const failure = (error: unknown): unknown => {
      let failed = timedOut
        ? new ClientError(call.method.path, Status.DEADLINE_EXCEEDED, 'Deadline exceeded')
        : error;
      if (details !== undefined && failed instanceof ClientError) {
        failed = new RichClientError(failed.path, failed.code, failed.details, details);
      }
      return (failed instanceof ClientError ? appErrorOf(failed) : undefined) ?? failed;
    };
    const mayRepeat =
      !call.requestStream &&
      !call.responseStream &&
      (repeatable.has(methodNameOf(call.method.path)) || carriesIdempotencyKey(call.request));

    let result: Response | void;
    try {
      for (let attempt = 1; ; attempt++) {
        // A copy of the caller's metadata per attempt, with the token.
        const metadata = await withInternalToken(
          call.method.path,
          call.requestStream ? undefined : call.request,
          rest.metadata,
        );
        const telemetry = startGrpcClientCall(call.method.path, metadata);
        try {
          result = yield* call.next(call.request, callOptions(metadata));
          break;
        } catch (error) {
          telemetry.end(error);
          const unavailable = error instanceof ClientError && error.code === Status.UNAVAILABLE;
          if (!mayRepeat || attempt > 1 || !unavailable || controller.signal.aborted) throw error;
        } finally {
          // OK unless it ended with the error above (also when the caller stopped a stream early).
          telemetry.end();
        }
      }
    } catch (error) {
      throw failure(error);
    } finally {
      callerSignal?.removeEventListener('abort', abort);
      clearTimeout(timer);
    }
    if (timedOut) throw failure(undefined);
    return result;
  };
