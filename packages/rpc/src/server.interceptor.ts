import { startGrpcServerCall } from '@marketplace/telemetry';
import { isAppError, unstorableTextViolations, validationError, type Logger } from '@marketplace/platform';
import { ServerError, Status, type CallContext, type ServerMiddlewareCall } from 'nice-grpc-common';
import { RichServerError } from 'nice-grpc-error-details';
import { serverErrorOf } from './app-error-status.js';
import { encodeStatusDetails, STATUS_DETAILS_TRAILER } from './status-details.codec.js';
import {
  InternalAuthError,
  internalTokenOf,
  serviceOfMethodPath,
  verifyInternalToken,
} from './internal-auth.js';

/** Kubernetes' gRPC probes and `waitForServing` send no token; health reveals nothing but a status. */
const HEALTH_SERVICE = 'grpc.health.v1.Health';

/** What a long-lived streaming method calls to be cancelled when the server shuts down. */
export interface TerminationContext {
  abortOnTerminate(): void;
}

/**
 * For a handler that may wait long (a long poll): its signal, also aborted once the server starts shutting down,
 * so a drain is not held until its bound. Every call passes the interceptor below, which gives the context this.
 */
export const signalAbortedOnTerminate = (context: CallContext): AbortSignal => {
  (context as CallContext & TerminationContext).abortOnTerminate();
  return context.signal;
};

/** By name, as nice-grpc does: abort errors come from several libraries and realms. */
const isAbortError = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'name' in error && error.name === 'AbortError';

/**
 * Everything a served call goes through, in one nice-grpc middleware (one generator per call instead of a chain
 * of six: docs/architecture.md, "How work moves"). In order:
 * - telemetry: continues the caller's trace in a SERVER span the handler runs in, records the duration;
 * - termination: endless streams (the health service's Watch) get `context.abortOnTerminate()`, and
 *   `terminate()` aborts them, so a graceful shutdown is not held until its bound; unary calls drain normally;
 * - the service token (docs/security.md, "Internal calls"): every call but health checks needs a valid token for
 *   the called service, else UNAUTHENTICATED before any handler runs; a request with an `actor` field gets the
 *   token's actor, whatever the caller wrote;
 * - text PostgreSQL cannot store (a NUL, a lone surrogate) is INVALID_ARGUMENT naming each field, whoever the
 *   caller (defence in depth behind the gateway's edge check, docs/security.md "Hostile input");
 * - errors: an AppError becomes its status with google.rpc details in `grpc-status-details-bin`; anything
 *   unexpected a bare INTERNAL (logged here, never sent); statuses and cancellations pass through.
 */
export const createServerInterceptor = (logger: Logger) => {
  const optedIn = new Set<AbortController>();
  let terminated = false;

  const admitted = async <Request>(
    call: ServerMiddlewareCall<Request, unknown>,
    callContext: CallContext,
  ): Promise<Request | AsyncIterable<Request>> => {
    const service = serviceOfMethodPath(call.method.path);
    if (service === HEALTH_SERVICE) return call.request;
    const token = internalTokenOf(callContext.metadata);
    let verified;
    try {
      if (token === undefined) throw new InternalAuthError('no token');
      verified = await verifyInternalToken(token, service);
    } catch (error) {
      if (!(error instanceof InternalAuthError)) throw error;
      logger.warn({ method: call.method.path, reason: error.message }, 'internal call refused');
      throw new ServerError(Status.UNAUTHENTICATED, 'internal calls need a valid service token');
    }
    if (call.requestStream) return call.request;
    const violations = unstorableTextViolations(call.request);
    if (violations.length > 0) {
      throw validationError(
        `invalid request: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
        violations,
      );
    }
    return typeof call.request === 'object' && call.request !== null && 'actor' in call.request
      ? { ...call.request, actor: verified.actor }
      : call.request;
  };

  const statusOf = (error: unknown, path: string, callContext: CallContext): unknown => {
    let status = error;
    if (isAppError(error)) {
      logger.debug({ method: path, kind: error.kind }, error.message);
      status = serverErrorOf(error);
    } else if (!(error instanceof ServerError) && !isAbortError(error)) {
      logger.error({ err: error, method: path }, 'unexpected error in a gRPC method');
      status = new ServerError(Status.INTERNAL, 'internal error');
    }
    if (status instanceof RichServerError) {
      callContext.trailer.set(
        STATUS_DETAILS_TRAILER,
        encodeStatusDetails(status.code, status.details, status.extra),
      );
    }
    return status;
  };

  async function* serverInterceptor<Request, Response>(
    call: ServerMiddlewareCall<Request, Response, TerminationContext>,
    callContext: CallContext,
  ): AsyncGenerator<Response, Response | void, undefined> {
    const telemetry = startGrpcServerCall(call.method.path, callContext.metadata);
    // The handler's signal: aborted with the call's, or by `terminate()`. A listener, not AbortSignal.any, which
    // cost about 16 µs a call (its weak references and their bookkeeping).
    const controller = new AbortController();
    const followCall = (): void => controller.abort(callContext.signal.reason);
    if (callContext.signal.aborted) followCall();
    else callContext.signal.addEventListener('abort', followCall, { once: true });
    const abortOnTerminate = (): void => {
      if (terminated) controller.abort();
      else optedIn.add(controller);
    };
    let failed = false;
    try {
      const request = await telemetry.within(() => admitted(call, callContext));
      const steps = call.next(request as typeof call.request, {
        ...callContext,
        signal: controller.signal,
        abortOnTerminate,
      });
      // Each step of the handler runs in the call's span, so its awaits keep the trace.
      let done = false;
      try {
        for (;;) {
          const step = await telemetry.within(() => steps.next());
          if (step.done) {
            done = true;
            return step.value;
          }
          yield step.value;
        }
      } finally {
        if (!done) await steps.return(undefined as Response & void);
      }
    } catch (error) {
      failed = true;
      const status = statusOf(error, call.method.path, callContext);
      telemetry.end(status);
      throw status;
    } finally {
      callContext.signal.removeEventListener('abort', followCall);
      optedIn.delete(controller);
      if (!failed) telemetry.end();
    }
  }

  const terminate = (): void => {
    terminated = true;
    for (const controller of optedIn) controller.abort();
  };

  return { serverInterceptor, terminate };
};
