import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import {
  ClientError,
  Metadata,
  ServerError,
  Status,
  type CallContext,
  type CallOptions,
  type ClientMiddlewareCall,
  type ServerMiddlewareCall,
} from 'nice-grpc-common';
import { durationHistogram, secondsSince, tracer } from './instruments.js';

const metadataGetter: TextMapGetter<Metadata> = {
  keys: (carrier) => [...carrier].map(([key]) => key),
  get: (carrier, key) => {
    const value = carrier.get(key);
    return typeof value === 'string' ? value : undefined;
  },
};
const metadataSetter: TextMapSetter<Metadata> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

/** Kubelet probes and readiness polls call the health service every few seconds: metrics, but no traces. */
const isHealthCheck = (path: string): boolean => path.startsWith('/grpc.health.v1.Health/');

const statusOf = (error: unknown): Status => {
  if (error instanceof ServerError || error instanceof ClientError) return error.code;
  if (error instanceof Error && error.name === 'AbortError') return Status.CANCELLED;
  return Status.UNKNOWN;
};

/** `/pkg.Service/Method` → the semantic-convention attributes. */
const rpcAttributes = (path: string) => {
  const [, service = '', method = ''] = path.split('/');
  return { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method };
};

/** Runs each step of a generator inside `active`, so the handler's awaits keep the call's span. */
async function* inContext<T, R>(active: Context, steps: AsyncGenerator<T, R, undefined>) {
  let done = false;
  try {
    for (;;) {
      const step = await context.with(active, () => steps.next());
      if (step.done) {
        done = true;
        return step.value;
      }
      yield step.value;
    }
  } finally {
    if (!done) await steps.return(undefined as R);
  }
}

/** The telemetry of one gRPC call: its span (none for health checks) and its duration, recorded once. */
export interface GrpcCallTelemetry {
  /** The context the call runs in: the span's, under the caller's trace. */
  readonly active: Context;
  /** Runs `work` in `active`, so its awaits keep the call's span. */
  within<T>(work: () => T): T;
  /** Ends the span and records the duration: OK without `error`, else the status `error` stands for. */
  end(error?: unknown): void;
}

const startCall = (
  path: string,
  kind: SpanKind,
  parent: Context,
  metric: readonly [name: string, description: string],
): GrpcCallTelemetry => {
  const attributes = rpcAttributes(path);
  const span = isHealthCheck(path)
    ? undefined
    : tracer().startSpan(path.slice(1), { kind, attributes }, parent);
  const startedAt = performance.now();
  let ended = false;
  const active = span ? trace.setSpan(parent, span) : parent;
  return {
    active,
    within: (work) => context.with(active, work),
    end: (...failure: [unknown?]) => {
      if (ended) return;
      ended = true;
      const status = failure.length === 0 ? Status.OK : statusOf(failure[0]);
      if (span) {
        span.setAttribute('rpc.grpc.status_code', status);
        if (status !== Status.OK) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: Status[status] });
          if (failure[0] instanceof Error) span.recordException(failure[0]);
        }
        span.end();
      }
      durationHistogram(...metric).record(secondsSince(startedAt), {
        ...attributes,
        'rpc.grpc.status_code': status,
      });
    },
  };
};

/**
 * A served call's telemetry: continues the caller's trace from the call metadata with a SERVER span, and records
 * `rpc.server.call.duration` per method and status code.
 */
export const startGrpcServerCall = (path: string, metadata: Metadata): GrpcCallTelemetry =>
  startCall(path, SpanKind.SERVER, propagation.extract(ROOT_CONTEXT, metadata, metadataGetter), [
    'rpc.server.call.duration',
    'Duration of gRPC calls served',
  ]);

/**
 * A call made: a CLIENT span whose context is sent as `traceparent` in `metadata` (which it adds to), and
 * `rpc.client.call.duration` per method and status code.
 */
export const startGrpcClientCall = (path: string, metadata: Metadata): GrpcCallTelemetry => {
  const telemetry = startCall(path, SpanKind.CLIENT, context.active(), [
    'rpc.client.call.duration',
    'Duration of gRPC calls made',
  ]);
  if (!isHealthCheck(path)) propagation.inject(telemetry.active, metadata, metadataSetter);
  return telemetry;
};

/** Runs `steps` to its end under `telemetry`, which it ends with the outcome (OK when stopped early). */
async function* measured<T, R>(
  telemetry: GrpcCallTelemetry,
  steps: AsyncGenerator<T, R, undefined>,
): AsyncGenerator<T, R, undefined> {
  let failed = false;
  try {
    return yield* steps;
  } catch (error) {
    failed = true;
    telemetry.end(error);
    throw error;
  } finally {
    if (!failed) telemetry.end();
  }
}

/**
 * nice-grpc server middleware, outermost: continues the caller's trace from the call metadata, opens a SERVER
 * span the handler runs in, and records `rpc.server.call.duration` per method and status code.
 */
export async function* grpcServerTelemetry<Request, Response>(
  call: ServerMiddlewareCall<Request, Response>,
  callContext: CallContext,
): AsyncGenerator<Response, Response | void, undefined> {
  const telemetry = startGrpcServerCall(call.method.path, callContext.metadata);
  return yield* measured<Response, Response | void>(
    telemetry,
    inContext<Response, Response | void>(telemetry.active, call.next(call.request, callContext)),
  );
}

/**
 * nice-grpc client middleware, innermost (it sees the transport's status codes): opens a CLIENT span, sends its
 * context as `traceparent` metadata, and records `rpc.client.call.duration` per method and status code.
 */
export async function* grpcClientTelemetry<Request, Response>(
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
): AsyncGenerator<Response, Response | void, undefined> {
  const metadata = Metadata(options.metadata);
  const telemetry = startGrpcClientCall(call.method.path, metadata);
  return yield* measured<Response, Response | void>(
    telemetry,
    call.next(call.request, { ...options, metadata }),
  );
}
