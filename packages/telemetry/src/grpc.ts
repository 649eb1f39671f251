import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
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

const finish = (span: Span | undefined, status: Status, error?: unknown): void => {
  if (!span) return;
  span.setAttribute('rpc.grpc.status_code', status);
  if (status !== Status.OK) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: Status[status] });
    if (error instanceof Error) span.recordException(error);
  }
  span.end();
};

/**
 * nice-grpc server middleware, outermost: continues the caller's trace from the call metadata, opens a SERVER
 * span the handler runs in, and records `rpc.server.call.duration` per method and status code.
 */
export async function* grpcServerTelemetry<Request, Response>(
  call: ServerMiddlewareCall<Request, Response>,
  callContext: CallContext,
): AsyncGenerator<Response, Response | void, undefined> {
  const path = call.method.path;
  const attributes = rpcAttributes(path);
  const parent = propagation.extract(ROOT_CONTEXT, callContext.metadata, metadataGetter);
  const span = isHealthCheck(path)
    ? undefined
    : tracer().startSpan(path.slice(1), { kind: SpanKind.SERVER, attributes }, parent);
  const active = span ? trace.setSpan(parent, span) : parent;
  const startedAt = performance.now();
  let status = Status.OK;
  try {
    return yield* inContext<Response, Response | void>(active, call.next(call.request, callContext));
  } catch (error) {
    status = statusOf(error);
    finish(span, status, error);
    throw error;
  } finally {
    if (status === Status.OK) finish(span, status);
    durationHistogram('rpc.server.call.duration', 'Duration of gRPC calls served').record(
      secondsSince(startedAt),
      { ...attributes, 'rpc.grpc.status_code': status },
    );
  }
}

/**
 * nice-grpc client middleware, innermost (it sees the transport's status codes): opens a CLIENT span, sends its
 * context as `traceparent` metadata, and records `rpc.client.call.duration` per method and status code.
 */
export async function* grpcClientTelemetry<Request, Response>(
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
): AsyncGenerator<Response, Response | void, undefined> {
  const path = call.method.path;
  const attributes = rpcAttributes(path);
  const span = isHealthCheck(path)
    ? undefined
    : tracer().startSpan(path.slice(1), { kind: SpanKind.CLIENT, attributes }, context.active());
  const metadata = Metadata(options.metadata);
  if (span) propagation.inject(trace.setSpan(context.active(), span), metadata, metadataSetter);
  const startedAt = performance.now();
  let status = Status.OK;
  try {
    return yield* call.next(call.request, { ...options, metadata });
  } catch (error) {
    status = statusOf(error);
    finish(span, status, error);
    throw error;
  } finally {
    if (status === Status.OK) finish(span, status);
    durationHistogram('rpc.client.call.duration', 'Duration of gRPC calls made').record(
      secondsSince(startedAt),
      { ...attributes, 'rpc.grpc.status_code': status },
    );
  }
}
