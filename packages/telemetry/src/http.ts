import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { durationHistogram, secondsSince, tracer } from './instruments.js';

/** What express adds to a request once a route matched. */
interface RoutedRequest extends IncomingMessage {
  readonly baseUrl?: string;
  readonly route?: { readonly path?: unknown };
}

/** nginx's code for a request the client abandoned before the answer. */
const CLIENT_CLOSED_REQUEST = 499;

/** The route template (`/api/products/:id`), never the raw path: bounded cardinality for metrics. */
const routeOf = (request: RoutedRequest): string | undefined =>
  typeof request.route?.path === 'string' ? `${request.baseUrl ?? ''}${request.route.path}` : undefined;

/**
 * Connect/express middleware, first in the chain: continues the caller's W3C trace (`traceparent`), opens a
 * SERVER span for the request that everything downstream (gRPC calls, log lines) joins, and records
 * `http.server.request.duration` per method, route and status.
 */
export const httpServerTelemetry =
  () =>
  (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void): void => {
    const startedAt = performance.now();
    const method = request.method ?? 'GET';
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer().startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': method, 'url.path': (request.url ?? '/').split('?')[0] },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    // 'close' comes after 'finish', and also when the client went away first (recorded as 499).
    response.once('close', () => {
      const route = routeOf(request);
      const status = response.writableFinished ? response.statusCode : CLIENT_CLOSED_REQUEST;
      if (route !== undefined) span.setAttribute('http.route', route);
      span.updateName(route === undefined ? method : `${method} ${route}`);
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      durationHistogram('http.server.request.duration', 'Duration of HTTP server requests').record(
        secondsSince(startedAt),
        {
          'http.request.method': method,
          'http.route': route ?? '(unmatched)',
          'http.response.status_code': status,
        },
      );
    });
    // Body parsing continues in stream callbacks: bind them, so handlers still see the request's span.
    context.bind(active, request);
    context.bind(active, response);
    context.with(active, next);
  };
