import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPostgresDatabase, type Database } from '@marketplace/database';
import { TEST_DATABASE_URL } from '@marketplace/database/testing';
import {
  deleteNamespaceStreams,
  eventually,
  freePort,
  MarketplaceClient,
  SHARED_EMBEDDINGS_CACHE_DIR,
} from '@marketplace/e2e';
import { startImageServer, type ImageServer } from '@marketplace/outbound-http/testing';
import { createLogger, type ServiceHandle } from '@marketplace/platform';
import { createInfrastructure, type OwnedInfrastructure } from '@marketplace/runtime';
import { embeddedConfigSchema } from '../src/embedded.config.js';
import { startMarketplace } from '../src/marketplace.js';
import { WorkMeter, type WorkCount } from './work-meter.js';

/**
 * The work one operation causes, counted and held to a budget (docs/architecture.md, "How work moves"): SQL
 * statements, commits, gRPC calls and event-log messages, summed over every service the operation reaches, in
 * embedded mode (PGlite, embedded log) and with PostgreSQL and NATS JetStream. The counts are attributed by trace
 * (see WorkMeter), so they are exact whatever the machine's speed. A change that adds a round trip fails here
 * until its budget is raised on purpose; a change that removes one lowers the budget with it.
 *
 * The services run in this process as `pnpm start` runs them, each behind its own gRPC server served in process
 * (whose calls are CLIENT spans as over a socket), on the infrastructure the mode's configuration chooses.
 */
type Operation = 'publication with imageUrl' | 'publication from the image library' | 'quote request';
type Budget = Readonly<WorkCount>;

/** Today's counts of one operation; each line's comment says what it is made of. */
const PUBLICATION_WITH_IMAGE: Budget = {
  // listing: append (which also writes the seller's-listings row and the image library row, companion writes);
  // each of the four consumers (catalog, quote, listing confirmations, subscription matching) stores its partition's
  // offset and records the event id in one statement, then applies it, in one transaction (docs/architecture.md,
  // "The batched consumer pipeline"), and claims the
  // partition with one more statement on its first batch there: at this test's rate every operation may be such a
  // first batch, so the budget counts the claims that steady traffic no longer pays. The gateway answers the
  // seller's key from its cache, and product numbers are taken 32 at a time (sequenceInBlocks): the warm-up read
  // the key and took the block.
  statements: 16,
  // the four consumers (listing's command is one autocommit statement)
  commits: 4,
  grpcCalls: 1, // gateway → listing CreateListing
  messagesPublished: 1, // ListingCreated
  messagesConsumed: 4, // catalog, quote, listing confirmations, subscription matching
};
// The library answers from memory (RecentImageLibrary): the same statements, without the library row's CTE.
const PUBLICATION_FROM_LIBRARY: Budget = PUBLICATION_WITH_IMAGE;
const QUOTE_REQUEST: Budget = {
  // listing snapshot, then one statement for the event and the quote_requests row (a CTE: no transaction); the
  // notification consumer's offset with its dedupe row (one statement), seller contact and the seller's email
  // queued in outgoing_mail (one lookup and one insert per batch, whatever its size; sent after the commit by the
  // mail worker, outside any trace), plus its claim of a
  // partition it has not served yet. Quote ids come in blocks, as product numbers do; a fresh id's stream is not read (handleCommand
  // newStream). The subscription service's seller-webhook consumer (docs/specification.md, "Seller notifications")
  // stores its offset with the event id and looks for the seller's endpoints, once per seller of its batch (plus
  // its claim): 3 more. At this test's rate every batch holds one event.
  statements: 9,
  // the notification consumer and the seller-webhook consumer (quote's command is one autocommit statement)
  commits: 2,
  grpcCalls: 1, // gateway → quote RequestQuote
  messagesPublished: 1, // QuoteRequested
  messagesConsumed: 2, // quote notifications, seller webhooks
};

const BUDGETS: Record<'embedded' | 'postgres-nats', Record<Operation, Budget>> = {
  embedded: {
    'publication with imageUrl': PUBLICATION_WITH_IMAGE,
    'publication from the image library': PUBLICATION_FROM_LIBRARY,
    'quote request': QUOTE_REQUEST,
  },
  'postgres-nats': {
    'publication with imageUrl': PUBLICATION_WITH_IMAGE,
    'publication from the image library': PUBLICATION_FROM_LIBRARY,
    'quote request': QUOTE_REQUEST,
  },
};

/** Operations measured of each kind, after a warm-up of each. */
const REPETITIONS = 3;
/** Work of a trace is complete once nothing was added to it for this long (every consumer group handled it). */
const SETTLED_AFTER_MS = 2_000;
const START_TIMEOUT_MS = 240_000;

const meter = new WorkMeter();
meter.install();

/** The fields of `count` above `budget`, each with both figures; empty when within budget. */
const overBudget = (count: WorkCount, budget: Budget) =>
  Object.fromEntries(
    (Object.keys(budget) as (keyof WorkCount)[])
      .filter((field) => count[field] > budget[field])
      .map((field) => [field, { count: count[field], budget: budget[field] }]),
  );

interface ModeUnderTest {
  readonly env: Record<string, string>;
  readonly tearDown: () => Promise<void>;
}

const embeddedMode = async (): Promise<ModeUnderTest> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'work-budget-'));
  return {
    env: { DATA_DIR: dataDir, EVENT_LOG: 'embedded' },
    tearDown: () => rm(dataDir, { recursive: true, force: true }),
  };
};

const postgresNatsMode = async (): Promise<ModeUnderTest> => {
  const suffix = randomBytes(4).toString('hex');
  const databaseName = `work_budget_${suffix}`;
  const namespace = `work-budget-${suffix}`;
  const server: Database = createPostgresDatabase({ url: TEST_DATABASE_URL, poolSize: 2 });
  await server.query(`CREATE DATABASE ${databaseName}`);
  const databaseUrl = new URL(TEST_DATABASE_URL);
  databaseUrl.pathname = `/${databaseName}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'work-budget-'));
  return {
    env: {
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl.toString(),
      EVENT_LOG: 'nats',
      NATS_URL: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
      EVENT_LOG_NAMESPACE: namespace,
    },
    tearDown: async () => {
      await server.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
      await server.close();
      await deleteNamespaceStreams(namespace);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
};

describe.each([
  { mode: 'embedded' as const, setUp: embeddedMode },
  { mode: 'postgres-nats' as const, setUp: postgresNatsMode },
])('work per operation, $mode', ({ mode, setUp }) => {
  let underTest: ModeUnderTest;
  let infrastructure: OwnedInfrastructure;
  let handles: ServiceHandle[] = [];
  let images: ImageServer;
  let client: MarketplaceClient;
  let sellerKey: string;
  let productId: string;

  const post = async (path: string, body: unknown, headers: Record<string, string>) =>
    client.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const lot = (name: string) => ({
    name,
    description: 'Counted by the work-budget test',
    price: 9.99,
    quantity: 500,
    promotePublicly: true,
  });
  const operations: Record<Operation, (n: number, traceparent: string) => Promise<number>> = {
    'publication with imageUrl': async (n, traceparent) =>
      (
        await post(
          '/api/products',
          { ...lot(`Counted lot ${n}`), imageUrl: images.imageUrl(`counted-${n}`) },
          { 'x-mcp-api-key': sellerKey, traceparent },
        )
      ).status,
    'publication from the image library': async (n, traceparent) =>
      (await post('/api/products', lot(`Counted lot ${n}`), { 'x-mcp-api-key': sellerKey, traceparent }))
        .status,
    'quote request': async (n, traceparent) =>
      (
        await post(
          '/api/ucp/quotes',
          { product_id: productId, quantity: 50, buyer: { email: `buyer-${n}@example.com` } },
          { traceparent },
        )
      ).status,
  };

  /** Resolves once no trace of `traceIds` gained work for SETTLED_AFTER_MS. */
  const settled = async (traceIds: readonly string[]): Promise<void> => {
    const total = () => JSON.stringify(traceIds.map((traceId) => meter.countOf(traceId)));
    let last = total();
    let stableSince = Date.now();
    await eventually(
      async () => {
        const now = total();
        if (now !== last) [last, stableSince] = [now, Date.now()];
        return Date.now() - stableSince >= SETTLED_AFTER_MS ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, describe: () => `work still growing: ${total()}` },
    );
  };

  beforeAll(async () => {
    underTest = await setUp();
    const port = await freePort();
    const adminToken = randomBytes(24).toString('hex');
    const config = embeddedConfigSchema.parse({
      ...underTest.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_TOKEN: adminToken,
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      EMBEDDINGS_CACHE_DIR: SHARED_EMBEDDINGS_CACHE_DIR,
      RATE_LIMIT_QUOTES_PER_IP: '0',
      RATE_LIMIT_QUOTES_PER_EMAIL: '0',
      RATE_LIMIT_QUOTES_PER_KEY: '0',
      RATE_LIMIT_CATALOG_PER_IP: '0',
      RATE_LIMIT_CATALOG_PER_KEY: '0',
    });
    const logger = createLogger({ service: 'marketplace', level: 'warn' });
    infrastructure = await createInfrastructure(config, logger, 'marketplace', {
      decorateDatabase: (db) => meter.countingDatabase(db),
    });
    handles = await startMarketplace(infrastructure, config);
    images = await startImageServer();
    client = new MarketplaceClient(`http://127.0.0.1:${port}`, adminToken);
    sellerKey = (await client.createAccount('seller', 'Counted Seller')).apiKey;

    // Warm-up: the image library gets its first image of the category, the quote service learns the listing.
    const warmUps: string[] = [];
    for (const operation of ['publication with imageUrl', 'publication from the image library'] as const) {
      const { traceId, traceparent } = meter.newTrace();
      warmUps.push(traceId);
      expect(await operations[operation](-1, traceparent)).toBe(201);
    }
    const published = await post('/api/products', lot('Counted quoted lot'), { 'x-mcp-api-key': sellerKey });
    productId = (published.body as { id: string }).id;
    await eventually(
      async () => {
        const { traceId, traceparent } = meter.newTrace();
        warmUps.push(traceId);
        return (await operations['quote request'](-1, traceparent)) === 201 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, describe: () => 'the quote service never learned the listing' },
    );
    await settled(warmUps);
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    for (const handle of [...handles].reverse()) await handle.stop();
    await infrastructure?.close();
    await images?.close();
    await underTest?.tearDown();
  }, START_TIMEOUT_MS);

  it.each(Object.keys(BUDGETS[mode]) as Operation[])(
    '%s stays within its budget',
    async (operation) => {
      const traceIds: string[] = [];
      for (let n = 0; n < REPETITIONS; n++) {
        const { traceId, traceparent } = meter.newTrace();
        traceIds.push(traceId);
        expect(await operations[operation](n, traceparent)).toBe(201);
      }
      await settled(traceIds);
      const counts = traceIds.map((traceId) => meter.countOf(traceId));
      // A consumer's transaction may apply several operations' events (the batches of partitions handed over
      // together, docs/architecture.md "The batched consumer pipeline"); its work counts toward one of their
      // traces. So the budget holds for the operations' sum, and each operation shows it reached a service and
      // the log.
      const total = Object.fromEntries(
        (Object.keys(BUDGETS[mode][operation]) as (keyof WorkCount)[]).map((field) => [
          field,
          counts.reduce((sum, count) => sum + count[field], 0),
        ]),
      ) as unknown as WorkCount;
      const budget = Object.fromEntries(
        Object.entries(BUDGETS[mode][operation]).map(([field, value]) => [field, value * REPETITIONS]),
      ) as unknown as Budget;
      if (process.env['WORK_COUNTS'] === 'print') console.info(mode, operation, total, counts);
      for (const count of counts) {
        expect(count.grpcCalls).toBeGreaterThan(0);
        expect(count.messagesPublished).toBeGreaterThan(0);
        expect(count.messagesConsumed).toBeGreaterThan(0);
      }
      expect(total.commits).toBeGreaterThan(0);
      // On failure, the statements say where the new round trip came from.
      expect({
        over: overBudget(total, budget),
        journals: traceIds.map((traceId) => meter.journalOf(traceId)),
      }).toEqual({ over: {}, journals: expect.any(Array) });
    },
    90_000,
  );
});
