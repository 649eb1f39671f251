import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startOtlpReceiver,
  traceTree,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@marketplace/telemetry/testing';
import { Cluster } from '../src/harness/cluster.js';
import { eventually } from '../src/harness/processes.js';

const SPAN_KIND = { server: 2, client: 3, producer: 4, consumer: 5 };
const CALLER_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN_ID = 'b7ad6b7169203331';

/**
 * Cluster mode with OpenTelemetry exporting to an in-process OTLP/HTTP receiver: one listing published through
 * the gateway is one trace across the gateway, the gRPC hop to listing, listing's outbox relay and the catalog's
 * projection consumer, each span exported by its own process.
 */
describe('one trace across processes', () => {
  let receiver: OtlpReceiver;
  let cluster: Cluster;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    cluster = await Cluster.start({
      env: {
        OTEL_SDK_DISABLED: 'false',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_METRIC_EXPORT_INTERVAL: '500',
      },
    });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await receiver?.close();
  }, 60_000);

  it('links gateway → listing → outbox relay → catalog consumer, and exports RED metrics', async () => {
    const sellerKey = (await cluster.adminClient().createAccount('seller', 'Traced Seller')).apiKey;
    const published = await fetch(`${cluster.client.baseUrl}/api/products`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-mcp-api-key': sellerKey,
        traceparent: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01`,
      },
      body: JSON.stringify({
        name: 'Traced pallet of kettles',
        description: 'Overstock',
        imageUrl: cluster.images.imageUrl('kettles'),
        price: 9.5,
        quantity: 40,
        category: 'home_goods',
        promotePublicly: true,
      }),
    });
    expect(published.status).toBe(201);

    const findSpan = (spans: readonly ReceivedSpan[], service: string, kind: number, name: RegExp) =>
      spans.find((span) => span.service === service && span.kind === kind && name.test(span.name));
    const tree = await eventually(
      async () => {
        const candidate = traceTree(receiver.spans(), CALLER_TRACE_ID);
        return findSpan(candidate.spans, 'catalog', SPAN_KIND.consumer, /^process marketplace\.listing\.v1$/)
          ? candidate
          : undefined;
      },
      {
        timeoutMs: 20_000,
        intervalMs: 100,
        describe: () =>
          `spans of the trace: ${JSON.stringify(
            traceTree(receiver.spans(), CALLER_TRACE_ID).spans.map(({ service, name, kind }) => ({
              service,
              name,
              kind,
            })),
          )}`,
      },
    );

    const gatewayRequest = findSpan(tree.spans, 'gateway', SPAN_KIND.server, /^POST \/api\/products$/);
    const gatewayCall = findSpan(tree.spans, 'gateway', SPAN_KIND.client, /ListingService\/CreateListing$/);
    const listingCall = findSpan(tree.spans, 'listing', SPAN_KIND.server, /ListingService\/CreateListing$/);
    const relayPublish = findSpan(
      tree.spans,
      'listing',
      SPAN_KIND.producer,
      /^publish marketplace\.listing\.v1$/,
    );
    const catalogConsume = findSpan(
      tree.spans,
      'catalog',
      SPAN_KIND.consumer,
      /^process marketplace\.listing\.v1$/,
    );
    expect(gatewayRequest?.parentSpanId).toBe(CALLER_SPAN_ID);
    expect(tree.parentOf(gatewayCall!)).toBe(gatewayRequest);
    expect(tree.parentOf(listingCall!)).toBe(gatewayCall);
    expect(tree.parentOf(relayPublish!)).toBe(gatewayCall);
    expect(tree.parentOf(catalogConsume!)).toBe(relayPublish);
    // One tree: the only span whose parent is not in the trace is the gateway's, under the caller's span.
    expect(tree.roots).toEqual([gatewayRequest]);

    await eventually(
      async () =>
        receiver.metricNames('gateway').has('http.server.request.duration') &&
        receiver.metricNames('listing').has('rpc.server.call.duration') &&
        receiver.metricNames('catalog').has('messaging.process.duration')
          ? true
          : undefined,
      { timeoutMs: 10_000, intervalMs: 100, describe: () => 'RED metrics not exported' },
    );
  });
});
