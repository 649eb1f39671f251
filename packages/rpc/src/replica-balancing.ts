import type { ChannelOptions } from '@grpc/grpc-js';
import { ClientError, Status, type CallOptions, type ClientMiddlewareCall } from 'nice-grpc-common';

/**
 * Channel options of every client: calls go round robin over every address the target resolves to (the pods
 * behind a headless Service, `dns:///<name>.<namespace>.svc:<port>`), and a connection that fails makes the
 * channel resolve the name again, at most every `grpc.dns_min_time_between_resolutions_ms`. A plain `host:port`
 * is one address: the same client works unchanged outside Kubernetes. docs/operations.md, "Scaling".
 */
export const REPLICA_CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  'grpc.dns_min_time_between_resolutions_ms': 2_000,
};

/**
 * Server side of the same: a connection lives at most this long, then the server closes it gracefully, so
 * clients resolve the name again and new pods (a scale-up) get their share of the calls.
 */
export const REPLICA_SERVER_OPTIONS: ChannelOptions = {
  'grpc.max_connection_age_ms': 60_000,
  'grpc.max_connection_age_grace_ms': 30_000,
};

/** The method name of a call's path, `/marketplace.catalog.v1.CatalogService/SearchProducts`. */
const methodNameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

const carriesIdempotencyKey = (request: unknown): boolean => {
  const key = (request as { idempotencyKey?: unknown } | null)?.idempotencyKey;
  return typeof key === 'string' && key !== '';
};

/**
 * Sends a unary call once more when the first attempt ends `UNAVAILABLE` (the pod it reached died or is
 * draining; round robin picks another): for the methods named in `repeatable` (reads), and for any call whose
 * request carries an idempotency key (the service answers a repeat with the first result, docs/idempotency.md).
 * A write without a key is never repeated. Both attempts share the call's deadline.
 */
export const retryOnUnavailableMiddleware = (repeatable: ReadonlySet<string>) =>
  async function* retryOnUnavailable<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    options: CallOptions,
  ): AsyncGenerator<Response, Response | void, undefined> {
    const mayRepeat =
      !call.requestStream &&
      !call.responseStream &&
      (repeatable.has(methodNameOf(call.method.path)) || carriesIdempotencyKey(call.request));
    if (!mayRepeat) return yield* call.next(call.request, options);
    try {
      return yield* call.next(call.request, options);
    } catch (error) {
      const unavailable = error instanceof ClientError && error.code === Status.UNAVAILABLE;
      if (!unavailable || options.signal?.aborted) throw error;
      return yield* call.next(call.request, options);
    }
  };
