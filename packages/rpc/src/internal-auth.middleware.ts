import type { Logger } from '@marketplace/platform';
import {
  ServerError,
  Status,
  type CallContext,
  type CallOptions,
  type ClientMiddlewareCall,
  type ServerMiddlewareCall,
} from 'nice-grpc-common';
import {
  InternalAuthError,
  internalTokenOf,
  serviceOfMethodPath,
  verifyInternalToken,
  withInternalToken,
} from './internal-auth.js';

/** Kubernetes' gRPC probes and `waitForServing` send no token; health reveals nothing but a status. */
const HEALTH_SERVICE = 'grpc.health.v1.Health';

/** Attaches this process's token (method's service as audience, the request's actor) to every call. */
export async function* internalAuthClientMiddleware<Request, Response>(
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
): AsyncGenerator<Response, Response | void, undefined> {
  const metadata = await withInternalToken(
    call.method.path,
    call.requestStream ? undefined : call.request,
    options.metadata,
  );
  return yield* call.next(call.request, { ...options, metadata });
}

/**
 * Refuses, UNAUTHENTICATED, every call but health checks without a valid token for the called service, before
 * any handler runs; a request with an `actor` field gets the token's actor in it, whatever the caller wrote.
 */
export const createInternalAuthServerMiddleware = (logger: Logger) =>
  async function* internalAuthServerMiddleware<Request, Response>(
    call: ServerMiddlewareCall<Request, Response>,
    context: CallContext,
  ): AsyncGenerator<Response, Response | void, undefined> {
    const service = serviceOfMethodPath(call.method.path);
    if (service === HEALTH_SERVICE) return yield* call.next(call.request, context);
    const token = internalTokenOf(context.metadata);
    let verified;
    try {
      if (token === undefined) throw new InternalAuthError('no token');
      verified = await verifyInternalToken(token, service);
    } catch (error) {
      if (!(error instanceof InternalAuthError)) throw error;
      logger.warn({ method: call.method.path, reason: error.message }, 'internal call refused');
      throw new ServerError(Status.UNAUTHENTICATED, 'internal calls need a valid service token');
    }
    const request =
      !call.requestStream &&
      typeof call.request === 'object' &&
      call.request !== null &&
      'actor' in call.request
        ? { ...call.request, actor: verified.actor }
        : call.request;
    return yield* call.next(request, context);
  };
