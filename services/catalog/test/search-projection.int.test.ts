import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import { createLogger } from '@marketplace/platform';
import type { SearchIndex } from '@marketplace/search';
import { createEmbeddedSearchIndex } from '@marketplace/search';
import { catalogMigrations } from '../src/adapters/catalog.migrations.js';
import { productsTable } from '../src/adapters/products.table.js';
import { eventually } from './support/eventually.js';
import type { SearchProjection } from '../src/adapters/search-projection.runner.js';
import { startSearchProjection } from '../src/adapters/search-projection.runner.js';
import type { CatalogProduct } from '../src/domain/catalog-product.js';
import type { CapturingEventLog } from './support/capturing-event-log.js';
import { capturingEventLog } from './support/capturing-event-log.js';
import {
  delivered,
  listingChanged,
  listingCreated,
  listingMessage,
  unknownListingEvent,
} from './support/listing-events.js';

const logger = createLogger({ service: 'catalog-test', level: 'silent' });

describe.each(testEngines())('search projection on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let log: CapturingEventLog;
  let index: SearchIndex<CatalogProduct>;
  let projection: SearchProjection;

  const start = async (changeBatchSize?: number): Promise<SearchProjection> => {
    index = createEmbeddedSearchIndex<CatalogProduct>();
    log = capturingEventLog();
    return startSearchProjection({ db, log, schema, index, logger, changeBatchSize });
  };
  const row = (id: string): Promise<CatalogProduct | undefined> => productsTable(schema).find(db, id);
  const publicHits = async (text: string): Promise<string[]> =>
    (await index.search({ text, filters: { visibility: 'public' }, limit: 10, offset: 0 })).hits.map(
      (hit) => hit.id,
    );
  const appliedEventCount = async (): Promise<number> =>
    (await db.query<{ n: number }>(`select count(*)::int as n from "${schema}".projection_applied_events`))
      .rows[0]!.n;

  beforeAll(async () => {
    db = await create();
  });
  beforeEach(async () => {
    schema = freshSchemaName('catalog_test');
    await migrate(db, schema, catalogMigrations);
    projection = await start();
  });
  afterAll(async () => {
    await db.close();
  });
  afterEach(async () => {
    await projection.stop();
    await dropSchema(db, schema);
  });

  it('consumes the listing topic with the catalog group, from the beginning', () => {
    expect(log.consumers[0]?.options).toMatchObject({
      topic: 'marketplace.listing.v1',
      group: 'catalog-search-projection',
      from: 'beginning',
    });
    expect(projection.isRunning()).toBe(true);
  });

  it('applies an event delivered twice once: one row, one applied event, one index entry', async () => {
    const message = delivered(listingCreated(listingMessage(1, { name: 'Cordless drill set' })));

    await log.deliver(message);
    await log.deliver(message);

    expect(await row('product_1')).toMatchObject({
      id: 'product_1',
      title: 'Cordless drill set',
      version: 1,
    });
    expect(await appliedEventCount()).toBe(1);
    expect(await index.count()).toBe(1);
    expect(await publicHits('drill')).toEqual(['product_1']);
  });

  it('indexes the row a batch wrote as written, and reads back only a product a redelivered batch skipped', async () => {
    const readBack: string[] = [];
    const query = db.query.bind(db);
    db.query = (sql, params) => {
      if (/where product_id = \$1$/.test(sql.trim())) readBack.push(String(params?.[0]));
      return query(sql, params);
    };
    try {
      const message = delivered(listingCreated(listingMessage(1, { name: 'Cordless drill set' })));
      await log.deliver(message);
      expect(readBack).toEqual([]);
      expect(await publicHits('drill')).toEqual(['product_1']);

      await log.deliver(message);
      expect(readBack).toEqual(['product_1']);
      expect(await index.count()).toBe(1);
    } finally {
      db.query = query;
    }
  });

  it("neither reads back nor indexes again the rows its own batches wrote, but follows other writers' rows", async () => {
    await projection.stop();
    // The documents answered to the feed's reads sent once the batch below was delivered (and committed).
    const feedDocuments: unknown[] = [];
    let delivered1 = false;
    const query = db.query.bind(db);
    db.query = (async (sql: string, params?: unknown[]) => {
      const watched = delivered1 && sql.includes('pg_snapshot_xmin');
      const result = await query(sql, params);
      if (watched) feedDocuments.push(...result.rows.map((feedRow) => feedRow.document));
      return result;
    }) as typeof db.query;
    try {
      index = createEmbeddedSearchIndex<CatalogProduct>();
      const upserted: string[] = [];
      const upsertMany = index.upsertMany.bind(index);
      index.upsertMany = (documents) => {
        upserted.push(...documents.map((document) => document.id));
        return upsertMany(documents);
      };
      log = capturingEventLog();
      projection = await startSearchProjection({ db, log, schema, index, logger, changePollIntervalMs: 10 });

      await log.deliver(delivered(listingCreated(listingMessage(1, { name: 'Cordless drill set' }))));
      delivered1 = true;
      // Another replica's projection writes product_2 straight into the table; the feed indexes it.
      await productsTable(schema).save(db, {
        ...(await row('product_1'))!,
        id: 'product_2',
        title: 'Angle grinder',
      });
      await eventually(async () => expect(upserted).toContain('product_2'));

      const documentIds = feedDocuments.map((document) => (document as CatalogProduct | null)?.id);
      expect(documentIds).toContain('product_2');
      expect(documentIds).not.toContain('product_1');
      expect(upserted.filter((id) => id === 'product_1')).toEqual(['product_1']);
      expect(await publicHits('grinder')).toEqual(['product_2']);
    } finally {
      db.query = query;
    }
  });

  it('does not let an older event overwrite a newer one, in the table or the index', async () => {
    await log.deliver(delivered(listingCreated(listingMessage(1, { name: 'Newer title' }), { version: 2 })));

    await log.deliver(delivered(listingCreated(listingMessage(1, { name: 'Older title' }), { version: 1 })));

    expect(await row('product_1')).toMatchObject({ title: 'Newer title', version: 2 });
    expect(await publicHits('older')).toEqual([]);
    expect(await publicHits('newer')).toEqual(['product_1']);
    expect(await appliedEventCount()).toBe(2);
  });

  it('applies a batch in order per product and indexes each product once, at its committed state', async () => {
    const upserted: string[] = [];
    const upsertMany = index.upsertMany.bind(index);
    index.upsertMany = async (documents) => {
      upserted.push(...documents.map((document) => document.id));
      return upsertMany(documents);
    };

    await log.deliver(
      delivered(listingCreated(listingMessage(1, { name: 'First title' }))),
      delivered(listingCreated(listingMessage(2, { name: 'Garden hose' }))),
      delivered(listingChanged(listingMessage(1, { name: 'Second title', version: 2 }))),
      delivered(listingChanged(listingMessage(1, { name: 'Third title', version: 3 }), 'quantitySet')),
    );

    expect(await row('product_1')).toMatchObject({ title: 'Third title', version: 3 });
    expect(await row('product_2')).toMatchObject({ title: 'Garden hose', version: 1 });
    expect(upserted.sort()).toEqual(['product_1', 'product_2']);
    expect(await publicHits('third')).toEqual(['product_1']);
    expect(await publicHits('first')).toEqual([]);
    expect(await appliedEventCount()).toBe(4);
  });

  it('applies a batch of N listing events in a constant number of statements, not 2N', async () => {
    const statements: string[] = [];
    const transaction = db.transaction.bind(db);
    db.transaction = (work, options) =>
      transaction((tx) => {
        const query = tx.query.bind(tx);
        tx.query = (sql, params) => {
          statements.push(sql);
          return query(sql, params);
        };
        return work(tx);
      }, options);
    const statementsOf = async (
      ...messages: [ReturnType<typeof delivered>, ...ReturnType<typeof delivered>[]]
    ): Promise<number> => {
      statements.length = 0;
      await log.deliver(...messages);
      return statements.length;
    };
    try {
      // The first batch also claims the partition.
      await statementsOf(delivered(listingCreated(listingMessage(1, { name: 'Warm up' }))));

      const one = await statementsOf(delivered(listingCreated(listingMessage(2, { name: 'Single lot' }))));
      const many = Array.from({ length: 40 }, (_, i) =>
        delivered(listingCreated(listingMessage(100 + i, { name: `Pallet lot ${i}` }))),
      );
      const forty = await statementsOf(many[0]!, ...many.slice(1));
      // A batch updating products the catalog holds, some twice.
      const changes = Array.from({ length: 40 }, (_, i) =>
        delivered(
          listingChanged(listingMessage(100 + (i % 25), { name: `Pallet lot ${i} v2`, version: 2 + i })),
        ),
      );
      const changed = await statementsOf(changes[0]!, ...changes.slice(1));

      // The offset with the event ids, the products read (locked) in one statement, written in one.
      expect(one).toBe(3);
      expect(forty).toBe(3);
      expect(changed).toBe(3);
      expect(await row('product_139')).toMatchObject({ title: 'Pallet lot 39', version: 1 });
      expect(await row('product_114')).toMatchObject({ title: 'Pallet lot 39 v2', version: 41 });
      expect(await row('product_124')).toMatchObject({ title: 'Pallet lot 24 v2', version: 26 });
      expect(await index.count()).toBe(42);
    } finally {
      db.transaction = transaction;
    }
  });

  it('keeps a listing that was not promoted in the read model but out of public search', async () => {
    await log.deliver(
      delivered(listingCreated(listingMessage(1, { name: 'Private drill', promotePublicly: false }))),
    );

    expect(await row('product_1')).toMatchObject({ promotePublicly: false });
    expect(await publicHits('drill')).toEqual([]);
    expect(await index.count()).toBe(1);
  });

  it('acknowledges an event of an unknown kind without projecting anything', async () => {
    await log.deliver(delivered(unknownListingEvent('product_1', 1)));

    expect(await row('product_1')).toBeUndefined();
    expect(await appliedEventCount()).toBe(1);
  });

  it('rolls back and rethrows on a malformed event, so the log delivers it again', async () => {
    const malformed = {
      ...delivered(listingCreated(listingMessage(1))),
      value: Uint8Array.from([0xff, 0xff]),
    };

    await expect(log.deliver(malformed)).rejects.toThrow();

    expect(await appliedEventCount()).toBe(0);
  });

  it('reloads the index from the table on restart, in pages, without any delivery', async () => {
    for (const n of [1, 2, 3, 4, 5]) {
      await log.deliver(delivered(listingCreated(listingMessage(n, { name: `Drill ${n}` }))));
    }
    await projection.stop();

    projection = await start(2);

    expect(log.consumers).toHaveLength(1);
    expect(await index.count()).toBe(5);
    expect(await publicHits('drill')).toEqual([
      'product_5',
      'product_4',
      'product_3',
      'product_2',
      'product_1',
    ]);
  });

  it('rebuilds: empties the catalog and replays the topic from the beginning under the next group', async () => {
    const event = delivered(listingCreated(listingMessage(1, { name: 'Cordless drill' })));
    await log.deliver(event);

    await projection.rebuild();

    expect(log.consumers.map(({ options, closed }) => [options.group, options.from, closed])).toEqual([
      ['catalog-search-projection', 'beginning', true],
      ['catalog-search-projection-g2', 'beginning', false],
    ]);
    // The old group is deleted from the log once closed, so the log keeps nothing of it.
    expect(log.deletedGroups).toEqual(['marketplace.listing.v1 catalog-search-projection']);
    expect(await row('product_1')).toBeUndefined();
    expect(await index.count()).toBe(0);
    expect(await appliedEventCount()).toBe(0);

    await log.deliver(event);

    expect(await publicHits('drill')).toEqual(['product_1']);
    expect(projection.group()).toBe('catalog-search-projection-g2');
  });

  it('resumes the rebuilt generation after a restart', async () => {
    await projection.rebuild();
    await projection.rebuild();
    await projection.stop();

    projection = await start();

    expect(log.consumers[0]?.options.group).toBe('catalog-search-projection-g3');
  });
});
