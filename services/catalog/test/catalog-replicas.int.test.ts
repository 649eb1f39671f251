import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { createPostgresDatabase, migrate, quoteIdent } from '@marketplace/database';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from '@marketplace/database/testing';
import type { EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import { ManualClock, createLogger } from '@marketplace/platform';
import { catalogV1 } from '@marketplace/proto';
import { createEmbeddedSearchIndex } from '@marketplace/search';
import type { GrpcClient } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';
import { catalogMigrations } from '../src/adapters/catalog.migrations.js';
import {
  readProductChanges,
  START_OF_CHANGES,
  startProductChangeFeed,
} from '../src/adapters/product-change-feed.js';
import { productsTable } from '../src/adapters/products.table.js';
import { SEARCH_PROJECTION } from '../src/adapters/search-projection.runner.js';
import type { CatalogServiceHandle } from '../src/index.js';
import { startCatalogService } from '../src/index.js';
import type { CatalogProduct } from '../src/domain/catalog-product.js';
import { conceptEmbedder } from './support/concept-embedder.js';
import { eventually } from './support/eventually.js';
import { listingChanged, listingCreated, listingMessage, SELLER } from './support/listing-events.js';

const logger = createLogger({ service: 'catalog-test', level: 'silent' });
const TOPIC = 'marketplace.listing.v1';
const LISTINGS = 60;
/**
 * The bound this test holds the replicas to, from the last publication to identical answers: mostly the
 * projection's own work (one transaction per event) on a machine shared with other test files, docs/operations.md.
 */
const CONVERGENCE_MS = 60_000;

const NAMES = ['Cordless drill', 'Drill bits', 'Kids toy', 'USB chargers', 'Power tool for screws'];

/** Two catalog replicas on one database and one log: each consumes some partitions, both serve everything. */
describe('two catalog replicas on PostgreSQL', () => {
  const schema = freshSchemaName('catalog_replicas');
  const logSchema = freshSchemaName('catalog_replicas_log');
  let db: Database;
  const logs: EventLog[] = [];
  const replicas: CatalogServiceHandle[] = [];
  const clients: GrpcClient<catalogV1.CatalogServiceDefinition>[] = [];

  const startReplica = async (): Promise<void> => {
    const log = await createEmbeddedEventLog({ db, schema: logSchema, pollIntervalMs: 100, leaseMs: 2_000 });
    logs.push(log);
    const replica = await startCatalogService({
      db,
      log,
      logger,
      clock: new ManualClock(0),
      grpc: { host: '127.0.0.1', port: 0 },
      schema,
      embedder: conceptEmbedder(),
    });
    replicas.push(replica);
    clients.push(createGrpcClient(catalogV1.CatalogServiceDefinition, replica.address));
  };

  const lexical = async (
    client: GrpcClient<catalogV1.CatalogServiceDefinition>,
    query: string,
  ): Promise<[string[], number]> => {
    const { products, total } = await client.client.searchProducts({ query, limit: 100, offset: 0 });
    return [products.map((product) => `${product.id}: ${product.title}`), total];
  };
  const semantic = async (
    client: GrpcClient<catalogV1.CatalogServiceDefinition>,
    query: string,
  ): Promise<string[]> => {
    const { matches } = await client.client.semanticSearch({ query, limit: 50 });
    return matches.map((match) => `${match.product!.id}: ${match.product!.title}`);
  };
  /** Every replica's answers to the same searches. */
  const answers = async (): Promise<unknown[]> =>
    Promise.all(
      clients.map(async (client) => ({
        drill: await lexical(client, 'drill'),
        toy: await lexical(client, 'toy'),
        all: await lexical(client, ''),
        screws: await semantic(client, 'tool for screws'),
        children: await semantic(client, 'plaything for children'),
      })),
    );

  beforeAll(async () => {
    db = createPostgresDatabase({ url: TEST_DATABASE_URL, poolSize: 8, applicationName: 'marketplace-test' });
    await startReplica();
    await startReplica();
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    for (const replica of replicas) await replica.stop();
    for (const log of logs) await log.close();
    await dropSchema(db, schema);
    await dropSchema(db, logSchema);
    await db.close();
  });

  it('answer identical lexical and semantic searches after listings, updates and removals', async () => {
    // The group's partitions are split between the two replicas' consumers.
    await eventually(async () => {
      const { rows } = await db.query<{ owners: number }>(
        `select count(distinct owner)::int as owners from ${quoteIdent(logSchema)}.consumer_offsets
         where topic = $1 and group_name = $2 and owner is not null`,
        [TOPIC, SEARCH_PROJECTION],
      );
      expect(rows[0]?.owners).toBe(2);
    }, 20_000);

    const listings = Array.from({ length: LISTINGS }, (_, i) =>
      listingMessage(i + 1, { name: `${NAMES[i % NAMES.length]!} lot ${i + 1}` }),
    );
    await logs[0]!.publish(
      TOPIC,
      listings.map((listing) => listingCreated(listing)),
    );
    // Updates (a new name), removals from public search (promotion withdrawn) and sell-outs, on both logs.
    await logs[1]!.publish(
      TOPIC,
      listings.flatMap((listing, i) =>
        i % 3 === 0
          ? [listingChanged({ ...listing, name: `Kids toy lot ${i + 1}`, version: 2 })]
          : i % 3 === 1
            ? [listingChanged({ ...listing, promotePublicly: false, version: 2 })]
            : [],
      ),
    );
    const published = Date.now();

    const [first, second] = await eventually(async () => {
      const [a, b] = await answers();
      expect(b).toEqual(a);
      // Everything arrived: 20 listings stay untouched, 20 were renamed, 20 left public search.
      expect((a as { all: [string[], number] }).all[1]).toBe(LISTINGS - LISTINGS / 3);
      return [a, b];
    }, CONVERGENCE_MS);
    const convergedMs = Date.now() - published;

    expect(second).toEqual(first);
    const { toy, children } = first as { toy: [string[], number]; children: string[] };
    expect(toy[0]).toContain('product_1: Kids toy lot 1');
    expect(children).toContain('product_1: Kids toy lot 1');
    expect(JSON.stringify(first)).not.toContain('product_2:');
    expect(convergedMs).toBeLessThan(CONVERGENCE_MS);
  }, 120_000);

  it('shows a listing in the replica that did not project it within a poll of the one that did', async () => {
    const listing = listingMessage(LISTINGS + 1, { name: 'Drill press' });
    const published = Date.now();
    await logs[0]!.publish(TOPIC, [listingCreated(listing)]);

    const visibleAfterMs = await Promise.all(
      clients.map(async (client) => {
        await eventually(async () => expect((await lexical(client, 'press'))[1]).toBe(1), CONVERGENCE_MS);
        return Date.now() - published;
      }),
    );

    // The default poll is 200 ms; the margin absorbs a loaded machine (both figures: docs/operations.md).
    expect(Math.abs(visibleAfterMs[0]! - visibleAfterMs[1]!)).toBeLessThan(2_000);
  }, 60_000);

  it('answers AwaitProductVersion on every replica once the row is committed, whichever replica projected it', async () => {
    const listing = listingMessage(LISTINGS + 2, { name: 'Bench grinder', promotePublicly: false });
    const request = {
      productId: listing.productId,
      minVersion: 1,
      sellerAccountId: SELLER,
      timeoutMs: 10_000,
    };
    const published = Promise.withResolvers<number>();
    const waits = clients.map(async (client) => {
      const { applied } = await client.client.awaitProductVersion(request);
      return { applied, afterMs: Date.now() - (await published.promise) };
    });
    // The waits are in before the listing exists: only the commit (or the change feed's read) answers them.
    await new Promise((resolve) => setTimeout(resolve, 200));
    published.resolve(Date.now());
    await logs[0]!.publish(TOPIC, [listingCreated(listing)]);
    const answered = await Promise.all(waits);
    expect(answered.map(({ applied }) => applied)).toEqual([true, true]);
    // One replica commits the row, the other reads it within a poll of its change feed (200 ms by default).
    for (const { afterMs } of answered) expect(afterMs).toBeLessThan(5_000);
    expect(Math.abs(answered[0]!.afterMs - answered[1]!.afterMs)).toBeLessThan(2_000);

    // Applied already: at once. A later version: false when the time passes. Another seller: never applied.
    const quick = { ...request, timeoutMs: 300 };
    for (const client of clients) {
      const startedAt = Date.now();
      expect(await client.client.awaitProductVersion(quick)).toEqual({ applied: true });
      expect(Date.now() - startedAt).toBeLessThan(300);
      expect(await client.client.awaitProductVersion({ ...quick, minVersion: 2 })).toEqual({
        applied: false,
      });
      expect(await client.client.awaitProductVersion({ ...quick, sellerAccountId: SELLER + 1 })).toEqual({
        applied: false,
      });
    }
  }, 60_000);

  it('refuses an AwaitProductVersion request out of bounds, naming the field', async () => {
    const request = { productId: 'product_1', minVersion: 1, sellerAccountId: SELLER, timeoutMs: 100 };
    for (const [field, change] of [
      ['timeoutMs', { timeoutMs: 0 }],
      ['timeoutMs', { timeoutMs: 10_001 }],
      ['minVersion', { minVersion: 0 }],
      ['sellerAccountId', { sellerAccountId: 0 }],
      ['productId', { productId: 'order_1' }],
    ] as const) {
      await expect(clients[0]!.client.awaitProductVersion({ ...request, ...change })).rejects.toMatchObject({
        kind: 'validation',
        violations: [expect.objectContaining({ path: field })],
      });
    }
  });
});

describe('reading product changes on PostgreSQL', () => {
  const schema = freshSchemaName('catalog_changes');
  let db: Database;

  beforeAll(async () => {
    db = createPostgresDatabase({ url: TEST_DATABASE_URL, poolSize: 4, applicationName: 'marketplace-test' });
    await migrate(db, schema, catalogMigrations);
  });
  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  const product = (n: number): CatalogProduct => ({
    id: `product_${n}`,
    sellerAccountId: 1,
    title: `Pallet ${n}`,
    description: 'Mixed lot',
    sku: `SKU-${n}`,
    category: 'tools',
    condition: 'overstock',
    priceCents: 1_000,
    currency: 'USD',
    quantity: 10,
    minOrderQuantity: 1,
    minQuoteQuantity: 1,
    brand: '',
    imageUrls: [],
    instantCheckout: false,
    promotePublicly: true,
    createdAtMs: n,
    updatedAtMs: n,
    version: 1,
  });

  it('never passes a row whose transaction commits after a later one', async () => {
    const products = productsTable(schema);
    let commitEarly: () => void = () => undefined;
    const early = new Promise<void>((resolve) => (commitEarly = resolve));
    let written: () => void = () => undefined;
    const earlyWritten = new Promise<void>((resolve) => (written = resolve));
    // The early transaction takes its change number first and commits last.
    const lateCommit = db.transaction(async (tx) => {
      await products.save(tx, product(1));
      written();
      await early;
    });
    await earlyWritten;
    await db.transaction((tx) => products.save(tx, product(2)));

    const whileOpen = await readProductChanges(db, schema, SEARCH_PROJECTION, START_OF_CHANGES, 10);
    commitEarly();
    await lateCommit;
    // Other sessions' transactions on this shared server may hold the horizon back a moment longer.
    const afterCommit = await eventually(async () => {
      const changes = await readProductChanges(db, schema, SEARCH_PROJECTION, START_OF_CHANGES, 10);
      expect(changes.products.map((p) => p.id)).toEqual(['product_1', 'product_2']);
      return changes;
    });

    expect(whileOpen.products.map((p) => p.id)).not.toContain('product_2');
    const resumed = await readProductChanges(db, schema, SEARCH_PROJECTION, afterCommit.last!, 10);
    expect(resumed.products).toEqual([]);
    expect(resumed.generation).toBe(1);
  });

  it('loads every committed row while a transaction elsewhere holds the horizon back', async () => {
    const products = productsTable(schema);
    // A transaction with an id, begun before the writes and still open: the horizon stays below them.
    const other = createPostgresDatabase({
      url: TEST_DATABASE_URL,
      poolSize: 2,
      applicationName: 'marketplace-test',
    });
    const release = Promise.withResolvers<void>();
    const begun = Promise.withResolvers<void>();
    const open = other.transaction(async (tx) => {
      await tx.query('select pg_current_xact_id()');
      begun.resolve();
      await release.promise;
    });
    await begun.promise;
    try {
      for (const n of [11, 12, 13]) await db.transaction((tx) => products.save(tx, product(n)));
      const { rows } = await db.query<{ n: number }>(
        `select count(*)::int as n from ${quoteIdent(schema)}.products`,
      );

      const index = createEmbeddedSearchIndex<CatalogProduct>();
      const feed = startProductChangeFeed({
        db,
        schema,
        projection: SEARCH_PROJECTION,
        index,
        logger,
        batchSize: 2,
      });
      try {
        await feed.loaded;
        expect(await index.count()).toBe(rows[0]!.n);
        expect(feed.isCaughtUp()).toBe(true);
      } finally {
        await feed.stop();
      }
    } finally {
      release.resolve();
      await open;
      await other.close();
    }
  });
});
