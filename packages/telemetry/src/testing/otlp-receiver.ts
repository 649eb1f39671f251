import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/JSON export carries it, with the exporting service's name. */
export interface ReceivedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
}

export interface OtlpReceiver {
  /** The base URL to set as `OTEL_EXPORTER_OTLP_ENDPOINT` (with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`). */
  readonly url: string;
  spans(): readonly ReceivedSpan[];
  /** Names of the metrics received, per service. */
  metricNames(service: string): ReadonlySet<string>;
  close(): Promise<void>;
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}
interface OtlpResource {
  resource?: { attributes?: KeyValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
}

const valueOf = (value: Record<string, unknown>): unknown =>
  value['stringValue'] ?? value['intValue'] ?? value['boolValue'] ?? value['doubleValue'];
const attributesOf = (attributes: KeyValue[] = []): Record<string, unknown> =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));
const serviceOf = (resource: OtlpResource): string => {
  const name = attributesOf(resource.resource?.attributes)['service.name'];
  return typeof name === 'string' ? name : '';
};

const bodyOf = async (request: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
};

/**
 * A small OTLP/HTTP receiver (JSON encoding) for tests: no collector can be installed here. It answers every
 * export with 200 and keeps the spans and metric names.
 */
export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const spans: ReceivedSpan[] = [];
  const metrics = new Map<string, Set<string>>();
  const server = createServer((request, response) => {
    bodyOf(request).then(
      (body) => {
        if (request.url === '/v1/traces') {
          const { resourceSpans = [] } = body as {
            resourceSpans?: (OtlpResource & { scopeSpans?: { spans?: OtlpSpan[] }[] })[];
          };
          for (const resourceSpan of resourceSpans) {
            const service = serviceOf(resourceSpan);
            for (const span of (resourceSpan.scopeSpans ?? []).flatMap((scope) => scope.spans ?? [])) {
              spans.push({
                service,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
              });
            }
          }
        } else if (request.url === '/v1/metrics') {
          const { resourceMetrics = [] } = body as {
            resourceMetrics?: (OtlpResource & { scopeMetrics?: { metrics?: { name: string }[] }[] })[];
          };
          for (const resourceMetric of resourceMetrics) {
            const names = metrics.get(serviceOf(resourceMetric)) ?? new Set<string>();
            for (const scope of resourceMetric.scopeMetrics ?? [])
              for (const metric of scope.metrics ?? []) names.add(metric.name);
            metrics.set(serviceOf(resourceMetric), names);
          }
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      },
      () => response.writeHead(400).end(),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    metricNames: (service) => metrics.get(service) ?? new Set(),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

/** The spans of one trace ordered parent before child, or an explanation of how they are not one tree. */
export const traceTree = (spans: readonly ReceivedSpan[], traceId: string) => {
  const ofTrace = spans.filter((span) => span.traceId === traceId);
  const ids = new Set(ofTrace.map((span) => span.spanId));
  return {
    spans: ofTrace,
    roots: ofTrace.filter((span) => span.parentSpanId === '' || !ids.has(span.parentSpanId)),
    parentOf: (span: ReceivedSpan) => ofTrace.find((candidate) => candidate.spanId === span.parentSpanId),
  };
};
