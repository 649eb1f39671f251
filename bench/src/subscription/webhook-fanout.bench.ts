import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ManagedProcess, OwnDatabase, repoRoot } from '@marketplace/e2e';
import { createNatsEventLog } from '@marketplace/eventlog';
import { subscriptionV1 } from '@marketplace/proto';
import { configureInternalAuth, createGrpcClient, waitForServing } from '@marketplace/rpc';
import { namespacedEventLog } from '@marketplace/runtime';
import { CATEGORIES } from '@marketplace/vocabulary';
import { httpClient, openLoop } from '../catalog/load.js';
import type { HttpExchange, Send } from '../catalog/load.js';
import { publishListingCreated } from '../listing-created.js';
import { withMarketplace } from '../marketplace.js';
import { summarize } from '../stats.js';
import { fanoutWorkload, firstAttemptLatencies, latencyOverFloor } from './fanout-workload.js';
import type { Arrival, FanoutListing, SavedSearchQuery } from './fanout-workload.js';

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';

export interface WebhookFanoutOptions {
  readonly subscriptions: number;
  readonly listingsPerSecond: number;
  readonly durationMs: number;
  /** Words titles and saved searches are drawn from: more words, fewer matches per listing. */
  readonly vocabulary: number;
}

/** Saved searches created at once. */
const SUBSCRIBE_CONCURRENCY = 32;
/** Publications in flight at most through the gateway (embedded mode), as publish-to-both-searches allows. */
const PUBLISH_CONCURRENCY = 64;
/** The subscription service's delivery worker sends this many attempts at once (its default). */
const DELIVERY_CONCURRENCY = 64;
/** Deliveries kept as they arrived, replayed by the floor. */
const REPLAYED_DELIVERIES = 200;

/** When a listing was published (performance.now()). */
interface Published {
  readonly productId: string;
  /** When its publication was asked for. */
  readonly requestedAt: number;
  /** When the marketplace had it (see FanoutTarget.measuredFrom). */
  readonly publishedAt: number;
}

/** How one mode saves searches and publishes listings. */
interface FanoutTarget {
  /** What each latency counts from. */
  readonly measuredFrom: { readonly requested: string; readonly committed: string };
  subscribe(query: SavedSearchQuery, webhookUrl: string): Promise<void>;
  publish(listing: FanoutListing): Promise<Published>;
}

/** The headers of a delivery that the floor sends again: the signature and its companions. */
const REPLAYED_HEADERS = [
  'content-type',
  'user-agent',
  'x-marketplace-event',
  'x-marketplace-delivery',
  'x-marketplace-timestamp',
  'x-marketplace-signature',
];

/** A request as the receiver got it, to replay. */
interface ReceivedRequest {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const replayedHeadersOf = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(REPLAYED_HEADERS.map((name) => [name, String(headers[name])]));

/** The subscribers' endpoint on loopback: notes every POST's delivery and product, answers 204. */
const startReceiver = async () => {
  const arrivals: Arrival[] = [];
  const kept: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const arrivedAt = performance.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const { data } = JSON.parse(body) as { data: { product: { id: string } } };
      arrivals.push({
        deliveryId: String(req.headers['x-marketplace-delivery']),
        productId: data.product.id,
        arrivedAt,
      });
      if (kept.length < REPLAYED_DELIVERIES) {
        kept.push({ path: req.url ?? '/', headers: replayedHeadersOf(req.headers), body });
      }
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    webhookUrl: `${baseUrl}/hook`,
    arrivals,
    kept,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
};

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * The floor of a delivery's latency on this machine: a plain node:http client (this process) replaying the
 * deliveries the receiver got, same bodies, signatures and headers, at `ratePerSecond` with as many connections
 * as the delivery worker, latency counted from each request's due time.
 */
const deliveryFloor = async (receiver: Receiver, ratePerSecond: number, durationMs: number) => {
  const exchange = httpClient(receiver.baseUrl, DELIVERY_CONCURRENCY);
  const replay: Send = async (n) => {
    const { status } = await exchange({ method: 'POST', ...receiver.kept[n % receiver.kept.length]! });
    if (status !== 204) throw new Error(`receiver answered ${status}`);
  };
  const run = await openLoop(replay, ratePerSecond, durationMs);
  return {
    ratePerSecond,
    concurrency: DELIVERY_CONCURRENCY,
    requests: run.requests,
    errors: run.errors,
    latencyMs: summarize(run.latenciesMs),
  };
};

/**
 * The scenario, whichever way the marketplace runs: the saved searches with a webhook each, then listings
 * published at `listingsPerSecond` for `durationMs` (each without waiting for the previous), until no webhook
 * arrived for 3 s; then the same run's floor (deliveryFloor) at the rate deliveries were due.
 */
const measureFanout = async (target: FanoutTarget, options: WebhookFanoutOptions) => {
  const receiver = await startReceiver();
  try {
    const workload = fanoutWorkload(options.vocabulary);
    const subscribeStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: SUBSCRIBE_CONCURRENCY }, async () => {
        while (next < options.subscriptions) {
          next++;
          await target.subscribe(workload.savedSearch(), receiver.webhookUrl);
        }
      }),
    );
    const subscribeSeconds = (performance.now() - subscribeStarted) / 1000;

    const total = Math.round((options.durationMs / 1000) * options.listingsPerSecond);
    const published: Published[] = [];
    let publishFailures = 0;
    const started = performance.now();
    const publishing: Promise<void>[] = [];
    for (let n = 0; n < total; n++) {
      const due = started + (n * 1000) / options.listingsPerSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      publishing.push(
        target.publish(workload.listing()).then(
          (listing) => void published.push(listing),
          () => void publishFailures++,
        ),
      );
    }
    await Promise.all(publishing);
    const publishSeconds = (performance.now() - started) / 1000;
    // Settled once nothing new arrived for 3 s.
    for (let seen = -1; seen !== receiver.arrivals.length;) {
      seen = receiver.arrivals.length;
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
    const attempts = receiver.arrivals.length;
    const latenciesFrom = (moment: (listing: Published) => number) =>
      firstAttemptLatencies(
        receiver.arrivals,
        new Map(published.map((listing) => [listing.productId, moment(listing)])),
      );
    const latencies = latenciesFrom((listing) => listing.publishedAt);
    const requestedToFirstAttemptMs = summarize(latenciesFrom((listing) => listing.requestedAt));
    const floor = await deliveryFloor(
      receiver,
      Math.max(1, Math.round(latencies.length / publishSeconds)),
      options.durationMs,
    );
    return {
      ...options,
      listings: published.length,
      publishFailures,
      listingsPerSecondAchieved: Math.round((published.length / publishSeconds) * 10) / 10,
      subscribePerSecond: Math.round(options.subscriptions / subscribeSeconds),
      deliveries: latencies.length,
      attempts,
      matchesPerListing: Math.round((latencies.length / Math.max(1, published.length)) * 100) / 100,
      measuredFrom: target.measuredFrom,
      committedToFirstAttemptMs: summarize(latencies),
      requestedToFirstAttemptMs,
      deliveryFloor: floor,
      requestedToFirstAttemptOverFloor: latencyOverFloor(requestedToFirstAttemptMs, floor.latencyMs),
    };
  } finally {
    receiver.close();
  }
};

/**
 * Saved-search fan-out in cluster mode: the subscription service as its own process on PostgreSQL and NATS
 * JetStream, the saved searches created over gRPC, and ListingCreated events published to
 * `marketplace.listing.v1` as the listing service's relay does after the commit; a latency counts from that
 * publication (the listing's createdAt).
 */
export const webhookFanoutCluster = async (options: WebhookFanoutOptions) => {
  const suffix = randomBytes(4).toString('hex');
  const namespace = `bench-subscription-${suffix}`;
  const database = await OwnDatabase.create(`bench_subscription_${suffix}`);
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-subscription-'));

  const port = await freePort();
  // The bench calls the service's gRPC API itself, so it signs with the key the service verifies.
  const internalAuthKey = randomBytes(32).toString('hex');
  configureInternalAuth({ key: Buffer.from(internalAuthKey), caller: 'bench' });
  const service = new ManagedProcess(
    'subscription',
    join(repoRoot, 'services/subscription/dist/src/main.js'),
    {
      DATABASE_URL: database.url,
      EVENT_LOG: 'nats',
      NATS_URL,
      EVENT_LOG_NAMESPACE: namespace,
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(port),
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      DATA_DIR: dataDir,
      WEBHOOK_SIGNING_SECRET: randomBytes(32).toString('hex'),
      INTERNAL_AUTH_KEY: internalAuthKey,
    },
  );
  const log = namespacedEventLog(await createNatsEventLog({ servers: NATS_URL }), namespace);
  const grpc = createGrpcClient(subscriptionV1.SubscriptionServiceDefinition, `127.0.0.1:${port}`);
  try {
    service.start();
    await waitForServing(`127.0.0.1:${port}`, { timeoutMs: 60_000 });
    let productNumber = 0;
    return await measureFanout(
      {
        measuredFrom: {
          requested: 'ListingCreated published to marketplace.listing.v1',
          committed: 'ListingCreated published to marketplace.listing.v1',
        },
        subscribe: async (query, webhookUrl) => {
          await grpc.client.subscribe({
            actor: { kind: 'buyer', id: '1' },
            ownerAccountId: 1,
            queryJson: JSON.stringify(query),
            channels: [{ kind: { $case: 'webhook', value: { url: webhookUrl } } }],
            correlationId: '',
          });
        },
        publish: async ({ name, category, condition, priceCents }) => {
          const productId = `product_${++productNumber}`;
          // The relay publishes after the commit: both moments are this one.
          const publishedAt = performance.now();
          await publishListingCreated(log, {
            productId,
            sellerAccountId: 2,
            name,
            description: 'Generated by the webhook fan-out benchmark',
            category,
            condition,
            priceCents,
            quantity: 100,
          });
          return { productId, requestedAt: publishedAt, publishedAt };
        },
      },
      options,
    );
  } finally {
    grpc.close();
    await service.stop('SIGTERM');
    await log.close();
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  }
};

/**
 * Saved-search fan-out against `pnpm start` as a process (PGlite, embedded log, every service): a buyer saves
 * the searches through `POST /api/subscriptions` and a seller publishes through `POST /api/products` (at most
 * PUBLISH_CONCURRENCY publications in flight); latencies count from the listing's POST and from its 201.
 */
export const webhookFanoutEmbedded = (options: WebhookFanoutOptions) =>
  withMarketplace('embedded', {}, async (marketplace) => {
    const buyer = await marketplace.admin.createAccount('buyer', 'Bench Saved Search Buyer');
    const seller = await marketplace.admin.createAccount('seller', 'Bench Fan-out Seller');
    const subscribeExchange = httpClient(marketplace.client.baseUrl, SUBSCRIBE_CONCURRENCY);
    const publishExchange = httpClient(marketplace.client.baseUrl, PUBLISH_CONCURRENCY);
    const post = (exchange: HttpExchange, apiKey: string, path: string, body: unknown) =>
      exchange({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', 'x-mcp-api-key': apiKey },
        body: JSON.stringify(body),
      });
    // A listing without imageUrl borrows the image of a similar one of its category (as a seller's later
    // listings do): the library learns one per category first, from private listings that match no search.
    for (const category of CATEGORIES) {
      const taught = await post(publishExchange, seller.apiKey, '/api/products', {
        name: 'Lot of assorted goods',
        description: 'Generated by the webhook fan-out benchmark',
        imageUrl: marketplace.imageUrl(category),
        category,
        price: 1,
        quantity: 1,
        promotePublicly: false,
      });
      if (taught.status !== 201) throw new Error(`publish answered ${taught.status}: ${taught.text()}`);
    }
    return measureFanout(
      {
        measuredFrom: { requested: 'POST /api/products sent', committed: 'its 201 read' },
        subscribe: async (query, webhookUrl) => {
          const answer = await post(subscribeExchange, buyer.apiKey, '/api/subscriptions', {
            query,
            channels: [{ type: 'webhook', url: webhookUrl }],
          });
          if (answer.status !== 201) throw new Error(`subscribe answered ${answer.status}: ${answer.text()}`);
        },
        publish: async ({ name, category, condition, priceCents }) => {
          const requestedAt = performance.now();
          const answer = await post(publishExchange, seller.apiKey, '/api/products', {
            name,
            description: 'Generated by the webhook fan-out benchmark',
            category,
            condition,
            price: priceCents / 100,
            quantity: 100,
            promotePublicly: true,
          });
          const publishedAt = performance.now();
          if (answer.status !== 201) throw new Error(`publish answered ${answer.status}`);
          return { productId: (JSON.parse(answer.text()) as { id: string }).id, requestedAt, publishedAt };
        },
      },
      options,
    );
  });
