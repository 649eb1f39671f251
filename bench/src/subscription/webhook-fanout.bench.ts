import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, ManagedProcess, repoRoot } from '@marketplace/e2e';
import { createNatsEventLog } from '@marketplace/eventlog';
import { listingV1, subscriptionV1 } from '@marketplace/proto';
import { createGrpcClient, waitForServing } from '@marketplace/rpc';
import { namespacedEventLog } from '@marketplace/runtime';
import { CATEGORIES, CONDITIONS } from '@marketplace/vocabulary';
import { summarize } from '../stats.js';

const SERVER_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';

export interface WebhookFanoutOptions {
  readonly subscriptions: number;
  readonly listingsPerSecond: number;
  readonly durationMs: number;
  /** Words titles and saved searches are drawn from: more words, fewer matches per listing. */
  readonly vocabulary: number;
}

/** A deterministic generator, so two runs measure the same subscriptions and listings. */
const seeded = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

const withServer = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
};

/**
 * Saved-search fan-out: the subscription service as its own process on PostgreSQL and NATS JetStream, with
 * `subscriptions` saved searches (category, condition in 4 of 5, a price cap, one word of text; each a webhook to
 * a local receiver), created over gRPC. ListingCreated events are then published to `marketplace.listing.v1` at
 * `listingsPerSecond`, as the listing service's relay does after the commit; the figure is the time from that
 * publication (the listing's createdAt) to the first attempt of each webhook delivery arriving at the receiver.
 */
export const webhookFanoutCluster = async (options: WebhookFanoutOptions) => {
  const suffix = randomBytes(4).toString('hex');
  const databaseName = `bench_subscription_${suffix}`;
  const namespace = `bench-subscription-${suffix}`;
  await withServer((client) => client.query(`CREATE DATABASE ${databaseName}`));
  const databaseUrl = new URL(SERVER_URL);
  databaseUrl.pathname = `/${databaseName}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-subscription-'));

  const publishedAt = new Map<string, number>();
  const firstAttempts = new Map<string, number>();
  let attempts = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const arrived = Date.now();
      attempts++;
      const deliveryId = String(req.headers['x-marketplace-delivery']);
      if (!firstAttempts.has(deliveryId)) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          data: { product: { id: string } };
        };
        const published = publishedAt.get(body.data.product.id);
        if (published !== undefined) firstAttempts.set(deliveryId, arrived - published);
      }
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const port = await freePort();
  const service = new ManagedProcess(
    'subscription',
    join(repoRoot, 'services/subscription/dist/src/main.js'),
    {
      DATABASE_URL: databaseUrl.toString(),
      EVENT_LOG: 'nats',
      NATS_URL,
      EVENT_LOG_NAMESPACE: namespace,
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(port),
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      DATA_DIR: dataDir,
      WEBHOOK_SIGNING_SECRET: randomBytes(32).toString('hex'),
    },
  );
  const log = namespacedEventLog(await createNatsEventLog({ servers: NATS_URL }), namespace);
  const grpc = createGrpcClient(subscriptionV1.SubscriptionServiceDefinition, `127.0.0.1:${port}`);
  try {
    service.start();
    await waitForServing(`127.0.0.1:${port}`, { timeoutMs: 60_000 });

    const random = seeded(7);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
    const words = Array.from({ length: options.vocabulary }, (_, n) => `word${n.toString(36)}`);
    const subscribeStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < options.subscriptions) {
          next++;
          await grpc.client.subscribe({
            actor: { kind: 'buyer', id: '1' },
            ownerAccountId: 1,
            queryJson: JSON.stringify({
              category: pick(CATEGORIES),
              ...(random() < 0.8 ? { condition: pick(CONDITIONS) } : {}),
              maxPrice: 500 + Math.floor(random() * 20_000),
              search: pick(words),
            }),
            channels: [{ kind: { $case: 'webhook', value: { url: receiverUrl } } }],
            correlationId: '',
          });
        }
      }),
    );
    const subscribeSeconds = (performance.now() - subscribeStarted) / 1000;

    const total = Math.round((options.durationMs / 1000) * options.listingsPerSecond);
    const started = performance.now();
    const publishing: Promise<void>[] = [];
    for (let n = 0; n < total; n++) {
      const due = started + (n * 1000) / options.listingsPerSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const productId = `product_${n + 1}`;
      const now = Date.now();
      publishedAt.set(productId, now);
      const value = listingV1.ListingEvent.encode({
        eventId: randomUUID(),
        productId,
        version: 1,
        occurredAtMs: now,
        actor: { kind: 'seller', id: '2' },
        correlationId: '',
        payload: {
          $case: 'created',
          value: {
            listing: listingV1.Listing.fromPartial({
              productId,
              sellerAccountId: 2,
              name: `Lot of ${pick(words)} and ${pick(words)}`,
              description: 'Generated by the webhook fan-out benchmark',
              category: pick(CATEGORIES),
              condition: pick(CONDITIONS),
              priceCents: 100 + Math.floor(random() * 20_000),
              currency: 'USD',
              quantity: 100,
              minOrderQuantity: 1,
              promotePublicly: true,
              createdAtMs: now,
              updatedAtMs: now,
            }),
          },
        },
      }).finish();
      publishing.push(
        log.publish('marketplace.listing.v1', [{ key: productId, value, headers: { ce_id: randomUUID() } }]),
      );
    }
    await Promise.all(publishing);
    const publishSeconds = (performance.now() - started) / 1000;
    // Settled once nothing new arrived for 3 s.
    for (let seen = -1; seen !== attempts;) {
      seen = attempts;
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
    const latencies = [...firstAttempts.values()];
    return {
      ...options,
      listings: total,
      listingsPerSecondAchieved: Math.round((total / publishSeconds) * 10) / 10,
      subscribePerSecond: Math.round(options.subscriptions / subscribeSeconds),
      deliveries: latencies.length,
      attempts,
      matchesPerListing: Math.round((latencies.length / total) * 100) / 100,
      committedToFirstAttemptMs: summarize(latencies),
    };
  } finally {
    grpc.close();
    await service.stop('SIGTERM');
    await log.close();
    receiver.close();
    await rm(dataDir, { recursive: true, force: true });
    await withServer((client) => client.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`));
  }
};
