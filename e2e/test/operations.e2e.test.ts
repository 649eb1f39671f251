import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  startOtlpReceiver,
  traceTree,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@marketplace/telemetry/testing';
import pg from 'pg';
import { BACKEND_SERVICES, Cluster } from '../src/harness/cluster.js';
import { eventually } from '../src/harness/processes.js';
import { mailFileNames } from '../src/harness/mail-store.js';

const SPAN_KIND = { server: 2, client: 3, producer: 4, consumer: 5 };
const CALLER_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN_ID = 'b7ad6b7169203331';
const QUOTE_CALLER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const QUOTE_CALLER_SPAN_ID = '00f067aa0ba902b7';

const findSpan = (spans: readonly ReceivedSpan[], service: string, kind: number, name: RegExp) =>
  spans.find((span) => span.service === service && span.kind === kind && name.test(span.name));

type TraceTree = ReturnType<typeof traceTree>;
type SpanFinder = (spans: readonly ReceivedSpan[]) => ReceivedSpan | undefined;

/**
 * Waits until the trace holds a span for every finder (each process exports its spans in its own batches, so
 * the last span of the chain can arrive before the first), and answers the tree with the spans found.
 */
const awaitSpans = async <K extends string>(
  receiver: OtlpReceiver,
  traceId: string,
  finders: Record<K, SpanFinder>,
): Promise<{ tree: TraceTree; spans: Record<K, ReceivedSpan> }> => {
  const find = (tree: TraceTree) =>
    Object.fromEntries(
      Object.entries<SpanFinder>(finders).map(([name, finder]) => [name, finder(tree.spans)]),
    ) as Record<K, ReceivedSpan | undefined>;
  return eventually(
    async () => {
      const tree = traceTree(receiver.spans(), traceId);
      const spans = find(tree);
      return Object.values(spans).every((span) => span !== undefined)
        ? { tree, spans: spans as Record<K, ReceivedSpan> }
        : undefined;
    },
    {
      timeoutMs: 20_000,
      intervalMs: 100,
      describe: () =>
        `spans of the trace: ${JSON.stringify(
          traceTree(receiver.spans(), traceId).spans.map(({ service, name, kind, spanId, parentSpanId }) => ({
            service,
            name,
            kind,
            spanId,
            parentSpanId,
          })),
        )}`,
    },
  );
};

/** The quote ids of the seller emails in an `.eml` store (file names come from the Message-IDs). */
const quoteIdsMailed = async (dataDir: string): Promise<number[]> =>
  (await mailFileNames(dataDir)).flatMap((name) => {
    const id = /^_quote-request\.(\d+)\.requested@.*\.eml$/.exec(name)?.[1];
    return id === undefined ? [] : [Number(id)];
  });

/**
 * What an SRE relies on, in cluster mode (every service its own process, PostgreSQL, NATS), with OpenTelemetry
 * exporting to an in-process OTLP/HTTP receiver: one request is one trace across the processes, and rolling
 * restarts under load lose no acknowledged request and no event.
 */
describe('operations in cluster mode', () => {
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
        OTEL_METRIC_EXPORT_INTERVAL: '1000',
        // A loaded machine starts six processes slowly: wait for PostgreSQL and NATS rather than exit.
        STARTUP_TIMEOUT_MS: '120000',
      },
    });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await receiver?.close();
  }, 60_000);

  const requestQuote = (productId: string, buyerEmail: string, headers: Record<string, string> = {}) =>
    cluster.client.request('/api/ucp/quotes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ product_id: productId, quantity: 20, buyer: { email: buyerEmail } }),
    });

  /**
   * A public listing the quote service already knows (it learns listings from their events) and whose seller it
   * can email: one warm-up request answered 201, its email written.
   */
  const listingOpenToQuotes = async (sellerName: string, name: string): Promise<string> => {
    const seller = await cluster.adminClient().createAccount('seller', sellerName);
    const published = await cluster.client.publish(seller.apiKey, {
      name,
      description: 'Overstock, open to bulk quotes',
      imageUrl: cluster.images.imageUrl('quotes'),
      price: 12,
      quantity: 500,
      category: 'tools',
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    const warmUp = await eventually(
      async () => {
        const answer = await requestQuote(published.body.id, 'warm-up@buyer.example');
        return answer.status === 201 ? (answer.body as { quote_request_id: number }) : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200, describe: () => cluster.describeProcesses() },
    );
    await eventually(
      async () =>
        (await quoteIdsMailed(cluster.dataDir)).includes(warmUp.quote_request_id) ? true : undefined,
      { timeoutMs: 20_000, intervalMs: 200, describe: () => cluster.process('quote').logs },
    );
    return published.body.id;
  };

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

    const {
      tree,
      spans: { gatewayRequest, gatewayCall, listingCall, relayPublish, catalogConsume },
    } = await awaitSpans(receiver, CALLER_TRACE_ID, {
      gatewayRequest: (spans) => findSpan(spans, 'gateway', SPAN_KIND.server, /^POST \/api\/products$/),
      gatewayCall: (spans) => findSpan(spans, 'gateway', SPAN_KIND.client, /ListingService\/CreateListing$/),
      listingCall: (spans) => findSpan(spans, 'listing', SPAN_KIND.server, /ListingService\/CreateListing$/),
      relayPublish: (spans) =>
        findSpan(spans, 'listing', SPAN_KIND.producer, /^publish marketplace\.listing\.v1$/),
      catalogConsume: (spans) =>
        findSpan(spans, 'catalog', SPAN_KIND.consumer, /^process marketplace\.listing\.v1$/),
    });
    expect(gatewayRequest.parentSpanId).toBe(CALLER_SPAN_ID);
    expect(tree.parentOf(gatewayCall)).toBe(gatewayRequest);
    expect(tree.parentOf(listingCall)).toBe(gatewayCall);
    expect(tree.parentOf(relayPublish)).toBe(gatewayCall);
    expect(tree.parentOf(catalogConsume)).toBe(relayPublish);
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
  }, 60_000);

  it('links gateway → quote service → outbox relay → seller email consumer for one quote request', async () => {
    const productId = await listingOpenToQuotes('Quoted Seller', 'Traced pallet of ladders');
    const answer = await requestQuote(productId, 'traced@buyer.example', {
      traceparent: `00-${QUOTE_CALLER_TRACE_ID}-${QUOTE_CALLER_SPAN_ID}-01`,
    });
    expect(answer.status).toBe(201);
    const quoteRequestId = (answer.body as { quote_request_id: number }).quote_request_id;

    const isSellerEmailConsumer = (span: ReceivedSpan) =>
      span.attributes['messaging.consumer.group.name'] === 'quote-notifications';
    const {
      tree,
      spans: { gatewayRequest, gatewayCall, quoteCall, relayPublish, emailConsume },
    } = await awaitSpans(receiver, QUOTE_CALLER_TRACE_ID, {
      gatewayRequest: (spans) => findSpan(spans, 'gateway', SPAN_KIND.server, /^POST \/api\/ucp\/quotes$/),
      gatewayCall: (spans) => findSpan(spans, 'gateway', SPAN_KIND.client, /QuoteService\/RequestQuote$/),
      quoteCall: (spans) => findSpan(spans, 'quote', SPAN_KIND.server, /QuoteService\/RequestQuote$/),
      relayPublish: (spans) =>
        findSpan(spans, 'quote', SPAN_KIND.producer, /^publish marketplace\.quote\.v1$/),
      emailConsume: (spans) =>
        spans.find(
          (span) =>
            span.service === 'quote' &&
            span.kind === SPAN_KIND.consumer &&
            span.name === 'process marketplace.quote.v1' &&
            isSellerEmailConsumer(span),
        ),
    });
    expect(gatewayRequest.parentSpanId).toBe(QUOTE_CALLER_SPAN_ID);
    expect(tree.parentOf(gatewayCall)).toBe(gatewayRequest);
    expect(tree.parentOf(quoteCall)).toBe(gatewayCall);
    expect(tree.parentOf(relayPublish)).toBe(gatewayCall);
    expect(tree.parentOf(emailConsume)).toBe(relayPublish);
    expect(tree.roots).toEqual([gatewayRequest]);

    // The consumer's work is done: the seller's email is in the `.eml` store, naming the buyer.
    const sellerEmail = await eventually(
      async () => {
        const path = join(
          cluster.dataDir,
          'mail',
          `_quote-request.${quoteRequestId}.requested@localhost_.eml`,
        );
        return readFile(path, 'utf8').catch(() => undefined);
      },
      { timeoutMs: 10_000, intervalMs: 100, describe: () => cluster.process('quote').logs },
    );
    expect(sellerEmail).toContain('To: quoted.seller@example.com');
    expect(sellerEmail).toContain('traced@buyer.example');
  }, 90_000);

  it('loses no acknowledged listing or quote request and no event while every service restarts one by one under load', async () => {
    const seller = await cluster.adminClient().createAccount('seller', 'Rolling Seller');
    const quotedProductId = await listingOpenToQuotes('Rolling Quoted Seller', 'Pallet of rolling toolboxes');
    const acknowledgedListings: string[] = [];
    const acknowledgedQuotes: number[] = [];
    /** Refusals and failures during the restarts, by kind (e.g. `quote 503`, `fetch failed`). */
    const failures = new Map<string, number>();
    const failed = (kind: string) => failures.set(kind, (failures.get(kind) ?? 0) + 1);
    let attempts = 0;
    let loading = true;
    /** Sends `attempt` back to back (25 ms apart) until the restarts are over; keeps what got a 201. */
    const worker = async (attempt: (n: number) => Promise<void>): Promise<void> => {
      for (let n = 0; loading; n++) {
        attempts++;
        try {
          await attempt(n);
        } catch (error) {
          failed((error as Error).message);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    const listingWorker = (worker: number) => async (n: number) => {
      const answer = await cluster.client.publish(seller.apiKey, {
        name: `Quillmere lot ${worker}-${n}`,
        description: 'Steady load during a rolling restart',
        imageUrl: cluster.images.imageUrl('quillmere'),
        price: 4,
        quantity: 10,
        category: 'tools',
        promotePublicly: true,
      });
      if (answer.status === 201) acknowledgedListings.push(answer.body.id);
      else failed(`listing ${answer.status}`);
    };
    const quoteWorker = (worker: number) => async () => {
      const answer = await requestQuote(quotedProductId, `rolling-${worker}@buyer.example`);
      if (answer.status === 201) {
        acknowledgedQuotes.push((answer.body as { quote_request_id: number }).quote_request_id);
      } else failed(`quote ${answer.status}`);
    };
    const load = [
      worker(listingWorker(1)),
      worker(listingWorker(2)),
      worker(quoteWorker(1)),
      worker(quoteWorker(2)),
    ];

    // One component at a time, as a Deployment rolls: SIGTERM (a clean drain exits 0), start, wait until ready.
    for (const name of [...BACKEND_SERVICES, 'gateway'] as const) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const exitCode = await cluster.process(name).stop('SIGTERM');
      expect({ name, exitCode }).toEqual({ name, exitCode: 0 });
      cluster.process(name).start();
      if (name === 'gateway') await cluster.waitUntilReady();
      else await cluster.waitForService(name);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    loading = false;
    await Promise.all(load);
    expect(acknowledgedListings.length).toBeGreaterThan(20);
    expect(acknowledgedQuotes.length).toBeGreaterThan(20);

    const db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    try {
      // Every listing the listing service committed (acknowledged or not) reaches the catalog, once.
      const committed = await db.query<{ id: string }>(
        `select data->'listing'->>'productId' as id from listing.events
         where type = 'ListingCreated' and (data->'listing'->>'sellerAccountId')::int = $1`,
        [seller.accountId],
      );
      const committedIds = new Set(committed.rows.map((row) => row.id));
      for (const id of acknowledgedListings) expect(committedIds).toContain(id);
      // Paging while the catalog still indexes is no snapshot (a listing indexed between two pages shifts the
      // next page: one seen twice, one missed): wait until every listing was seen, then read the settled index.
      await eventually(
        async () => {
          const products = await cluster.client.searchAll('quillmere');
          return new Set(products.map((product) => product.id)).size >= committedIds.size ? true : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200, describe: () => cluster.describeProcesses() },
      );
      const foundIds = (await cluster.client.searchAll('quillmere')).map((product) => product.id);
      expect(foundIds).toHaveLength(committedIds.size);
      expect(new Set(foundIds)).toEqual(committedIds);

      // Every event of the quote outbox (the whole run's) is applied once by the seller email consumer, and every
      // committed quote request is one email (one file per Message-ID, so a resend would not add one).
      const quoteEvents = await db.query<{ event_id: string; type: string; quote_request_id: number }>(
        `select event_id, type, (data->'quoteRequest'->>'quoteRequestId')::int as quote_request_id
         from quote.events`,
      );
      const quoteEventIds = new Set(quoteEvents.rows.map((row) => row.event_id));
      const committedQuoteIds = new Set(
        quoteEvents.rows.filter((row) => row.type === 'QuoteRequested').map((row) => row.quote_request_id),
      );
      for (const id of acknowledgedQuotes) expect(committedQuoteIds).toContain(id);
      const appliedQuoteEventIds = async () =>
        new Set(
          (
            await db.query<{ event_id: string }>(
              `select event_id from quote.projection_applied_events where projection = 'quote-notifications'`,
            )
          ).rows.map((row) => row.event_id),
        );
      await eventually(
        async () =>
          (await appliedQuoteEventIds()).size >= quoteEventIds.size &&
          (await quoteIdsMailed(cluster.dataDir)).length >= committedQuoteIds.size
            ? true
            : undefined,
        { timeoutMs: 30_000, intervalMs: 200, describe: () => cluster.process('quote').logs },
      );
      expect(await appliedQuoteEventIds()).toEqual(quoteEventIds);
      expect(new Set(await quoteIdsMailed(cluster.dataDir))).toEqual(committedQuoteIds);
      process.stdout.write(
        `rolling restart: ${attempts} requests; acknowledged ${acknowledgedListings.length} listings and ` +
          `${acknowledgedQuotes.length} quote requests; committed ${committedIds.size} listings and ` +
          `${committedQuoteIds.size} quote requests; refused or failed during restarts: ` +
          `${JSON.stringify(Object.fromEntries(failures))}\n`,
      );
    } finally {
      await db.end();
    }
  }, 240_000);
});
