import { createServer, request as httpRequest } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createChannel, createClientFactory, createServer as createGrpcServer, type Server } from 'nice-grpc';
import { ServerError, Status, type CallContext, type ServiceImplementation } from 'nice-grpc';
import type { DeliveredMessage, EventLog, ConsumeOptions } from '@marketplace/eventlog';
import { catalogV1 } from '@marketplace/proto';
import {
  grpcClientTelemetry,
  grpcServerTelemetry,
  httpServerTelemetry,
  startTelemetry,
  tracedEventLog,
  type Telemetry,
} from '../src/index.js';
import { startOtlpReceiver, traceTree, type OtlpReceiver } from '../src/testing/index.js';

const SPAN_KIND = { server: 2, client: 3, producer: 4, consumer: 5 };

/** An event log that delivers each publish to the subscribers at once, in process. */
const inMemoryLog = (): EventLog => {
  const subscribers: ConsumeOptions[] = [];
  let offset = 0;
  return {
    async publish(topic, messages) {
      for (const message of messages)
        for (const subscriber of subscribers.filter((s) => s.topic === topic)) {
          const delivered: DeliveredMessage = { ...message, topic, partition: 0, offset: String(offset++) };
          await subscriber.handler({ topic, partition: 0, messages: [delivered] });
        }
    },
    async consume(options) {
      subscribers.push(options);
      return { close: async () => undefined };
    },
    async follow() {
      throw new Error('nothing here follows');
    },
    async deleteGroup() {
      throw new Error('nothing here deletes a group');
    },
    close: async () => undefined,
  };
};

/**
 * One request through the pieces a real one crosses: HTTP (gateway middleware) → gRPC client → gRPC server,
 * whose handler publishes an event carrying the call's traceparent (as the outbox does) → a consumer. Exported
 * over OTLP/HTTP to an in-process receiver, the spans form one connected trace.
 */
describe('telemetry over OTLP', () => {
  let receiver: OtlpReceiver;
  let telemetry: Telemetry;
  let grpcServer: Server;
  let httpServer: ReturnType<typeof createServer>;
  const consumed: string[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '20',
      OTEL_METRIC_EXPORT_INTERVAL: '60000',
      OTEL_SERVICE_NAME: 'telemetry-test',
    });
    telemetry = startTelemetry({ serviceName: 'unused' });

    const log = tracedEventLog(inMemoryLog());
    await log.consume({
      topic: 'marketplace.test.v1',
      group: 'test',
      handler: async (batch) => {
        consumed.push(...batch.messages.map((message) => message.headers['ce_id'] ?? ''));
      },
    });

    grpcServer = createGrpcServer().use(grpcServerTelemetry);
    const unimplemented = Object.fromEntries(
      Object.keys(catalogV1.CatalogServiceDefinition.methods).map((method) => [
        method,
        async () => {
          throw new ServerError(Status.UNIMPLEMENTED, method);
        },
      ]),
    );
    grpcServer.add(catalogV1.CatalogServiceDefinition, {
      ...unimplemented,
      listCategories: async (_request: unknown, context: CallContext) => {
        const traceparent = context.metadata.get('traceparent');
        await log.publish('marketplace.test.v1', [
          {
            key: 'k',
            value: new Uint8Array(),
            headers: { ce_id: 'event-1', traceparent: String(traceparent) },
          },
        ]);
        return { categories: [] };
      },
    } as unknown as ServiceImplementation<typeof catalogV1.CatalogServiceDefinition>);
    const grpcPort = await grpcServer.listen('127.0.0.1:0');
    const channel = createChannel(`127.0.0.1:${grpcPort}`);
    const catalog = createClientFactory()
      .use(grpcClientTelemetry)
      .create(catalogV1.CatalogServiceDefinition, channel);

    const handle = httpServerTelemetry();
    httpServer = createServer((request, response) => {
      handle(request, response, () => {
        catalog.listCategories({}).then(
          () => response.writeHead(200).end('ok'),
          () => response.writeHead(500).end(),
        );
      });
    });
    httpServer.listen(0, '127.0.0.1');
    await once(httpServer, 'listening');
  });

  afterAll(async () => {
    httpServer?.close();
    await grpcServer?.shutdown();
    await receiver?.close();
  });

  it('exports one connected trace from the caller through HTTP, gRPC and the event log', async () => {
    const { port } = httpServer.address() as AddressInfo;
    const callerTraceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const status = await new Promise<number>((resolve, reject) => {
      httpRequest(
        `http://127.0.0.1:${port}/api/categories`,
        { headers: { traceparent: `00-${callerTraceId}-00f067aa0ba902b7-01` } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(status).toBe(200);
    expect(consumed).toEqual(['event-1']);
    await telemetry.shutdown();

    const tree = traceTree(receiver.spans(), callerTraceId);
    const byKind = (kind: number) => tree.spans.filter((span) => span.kind === kind);
    expect(tree.spans.map((span) => span.name).sort()).toEqual([
      'GET',
      'marketplace.catalog.v1.CatalogService/ListCategories',
      'marketplace.catalog.v1.CatalogService/ListCategories',
      'process marketplace.test.v1',
      'publish marketplace.test.v1',
    ]);
    // The HTTP span continues the caller's span; every other span's parent is in the trace.
    expect(tree.roots.map((span) => span.parentSpanId)).toEqual(['00f067aa0ba902b7']);
    const [httpSpan] = byKind(SPAN_KIND.server).filter((span) => span.name === 'GET');
    const [clientSpan] = byKind(SPAN_KIND.client);
    const [grpcServerSpan] = byKind(SPAN_KIND.server).filter((span) => span.name !== 'GET');
    const [producerSpan] = byKind(SPAN_KIND.producer);
    const [consumerSpan] = byKind(SPAN_KIND.consumer);
    expect(tree.parentOf(clientSpan!)).toBe(httpSpan);
    expect(tree.parentOf(grpcServerSpan!)).toBe(clientSpan);
    expect(tree.parentOf(producerSpan!)).toBe(clientSpan);
    expect(tree.parentOf(consumerSpan!)).toBe(producerSpan);
    expect(httpSpan!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
    });
    expect(consumerSpan!.attributes).toMatchObject({
      'messaging.destination.name': 'marketplace.test.v1',
      'messaging.message.id': 'event-1',
    });

    // RED metrics, flushed by the shutdown.
    expect([...receiver.metricNames('telemetry-test')].sort()).toEqual([
      'http.server.request.duration',
      'messaging.process.duration',
      'rpc.client.call.duration',
      'rpc.server.call.duration',
    ]);
  });
});
