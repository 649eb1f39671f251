import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { migrate, type Database } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  testEngines,
} from '@marketplace/database/testing';
import { createLogger } from '@marketplace/platform';
import { LISTING_IMPORT_MIGRATIONS } from '../src/contexts/listings/adapters/listing-imports.migrations.js';
import { ListingImportsTable } from '../src/contexts/listings/adapters/listing-imports.table.js';
import { storedRowsOf } from '../src/contexts/listings/imports.routes.js';
import { importRowsOf } from '../src/contexts/listings/imports/import-file.js';
import type { ApplyChunk } from '../src/contexts/listings/imports/import.ports.js';
import {
  IMPORT_CHUNK_ROWS,
  runImport,
  startImportWorker,
} from '../src/contexts/listings/imports/import.worker.js';

const SELLER = 7;

/** A file of `count` rows; every 500th has a price that is no number. */
const tableOf = (count: number): string[][] => [
  ['sku', 'name', 'description', 'price', 'quantity'],
  ...Array.from({ length: count }, (_, at) => [
    `SKU-${at}`,
    `Item ${at}`,
    'Boxed, tested',
    at % 500 === 499 ? 'n/a' : '12.50',
    '',
  ]),
];

/** The bulk engine as the worker sees it: created the first time a key is seen, the recorded answer after. */
const fakeBulk = () => {
  const calls: { key: string; items: number }[] = [];
  const answers = new Map<string, Awaited<ReturnType<ApplyChunk>>>();
  let failNext = false;
  const apply: ApplyChunk = async ({ items, idempotencyKey }) => {
    calls.push({ key: idempotencyKey, items: items.length });
    if (failNext) {
      failNext = false;
      throw new Error('listing service unavailable');
    }
    const earlier = answers.get(idempotencyKey);
    if (earlier) return earlier;
    const answer = {
      results: items.map((item, index) =>
        (item as { sku: string }).sku === 'SKU-3'
          ? {
              index,
              status: 'error' as const,
              message: 'invalid item',
              errors: [{ field: 'price', message: 'must be greater than 0' }],
            }
          : { index, status: 'created' as const, product_id: `product_${index}`, version: 1 },
      ),
      summary: { created: items.length, updated: 0, unchanged: 0, error: 0 },
    };
    answers.set(idempotencyKey, answer);
    return answer;
  };
  return { apply, calls, failOnce: () => (failNext = true) };
};

describe.each(testEngines())('listing imports on $name', ({ create }) => {
  const schema = freshSchemaName('listing_imports');
  let db: Database;
  let store: ListingImportsTable;

  beforeAll(async () => {
    db = await create();
    await migrate(db, schema, LISTING_IMPORT_MIGRATIONS);
    store = new ListingImportsTable(db, schema);
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  it(`applies 2,500 rows in chunks of ${IMPORT_CHUNK_ROWS}, paced, reports bad cells by row and column, shows only to its seller`, async () => {
    const id = randomUUID();
    await store.create({
      id,
      sellerAccountId: SELLER,
      mode: 'upsert_by_sku',
      format: 'csv',
      rows: storedRowsOf(importRowsOf(tableOf(2_500))),
    });
    expect(await store.find(SELLER + 1, id)).toBeUndefined();
    const queued = await store.find(SELLER, id);
    expect(queued).toMatchObject({ status: 'queued', rowsTotal: 2_500, rowsProcessed: 5 });

    const bulk = fakeBulk();
    const claimed = await store.claim(60_000);
    expect(claimed).toEqual({ id, sellerAccountId: SELLER, mode: 'upsert_by_sku' });
    expect(await store.claim(60_000)).toBeUndefined();
    const paced: { chunksBefore: number; previous: unknown }[] = [];
    await runImport(store, bulk.apply, claimed!, async (previous) => {
      paced.push({ chunksBefore: bulk.calls.length, previous });
    });

    // 2,495 valid rows (5 bad prices): full chunks, then the rest; the pace is asked before every chunk, with the
    // last listing the chunk before wrote (the catalog applies it last).
    const chunks = Math.ceil(2_495 / IMPORT_CHUNK_ROWS);
    expect(bulk.calls).toEqual(
      Array.from({ length: chunks }, (_, chunk) => ({
        key: `import-${id}-chunk-${chunk}`,
        items: chunk < chunks - 1 ? IMPORT_CHUNK_ROWS : 2_495 - (chunks - 1) * IMPORT_CHUNK_ROWS,
      })),
    );
    expect(paced).toEqual(
      Array.from({ length: chunks }, (_, chunk) => ({
        chunksBefore: chunk,
        previous:
          chunk === 0
            ? undefined
            : { sellerAccountId: SELLER, productId: `product_${IMPORT_CHUNK_ROWS - 1}`, version: 1 },
      })),
    );
    const done = await store.find(SELLER, id);
    expect(done).toMatchObject({ status: 'done', rowsTotal: 2_500, rowsProcessed: 2_500 });
    expect(done?.results).toHaveLength(2_500);
    const errors = done?.results.flatMap((result) => result.errors);
    expect(errors).toContainEqual({ row: 501, column: 'price', message: 'must be a number, not "n/a"' });
    expect(errors).toContainEqual({ row: 5, column: 'price', message: 'must be greater than 0' });
    expect(errors).toHaveLength(6);
    expect(done?.results.find((result) => result.row === 2)).toEqual({
      row: 2,
      status: 'created',
      productId: 'product_0',
      errors: [],
    });
  });

  it('resumes after a failed chunk with the same key, never applying a chunk twice', async () => {
    const id = randomUUID();
    await store.create({
      id,
      sellerAccountId: SELLER,
      mode: 'create',
      format: 'xlsx',
      rows: storedRowsOf(importRowsOf(tableOf(1_200))),
    });
    const bulk = fakeBulk();
    let applied = 0;
    const counting: ApplyChunk = async (input) => {
      const answer = await bulk.apply(input);
      applied++;
      if (applied === 1) bulk.failOnce();
      return answer;
    };
    const worker = startImportWorker({
      store,
      apply: counting,
      logger: createLogger({ service: 'gateway', level: 'silent' }),
      pollMs: 50,
    });
    try {
      for (let waited = 0; waited < 30_000; waited += 100) {
        const view = await store.find(SELLER, id);
        if (view?.status === 'done' || view?.status === 'failed') break;
        // The failed chunk waits out the retry delay; release it early, as a lease that ran out would.
        await db.query(
          `UPDATE ${schema}.imports SET lease_until = now() WHERE id = $1 AND status = 'running'`,
          [id],
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await worker.stop();
    }
    // 1,198 valid rows; the second chunk's first call failed and was sent again with its key.
    const chunks = Math.ceil(1_198 / IMPORT_CHUNK_ROWS);
    expect(bulk.calls.map((call) => call.key)).toEqual(
      [0, 1, ...Array.from({ length: chunks - 1 }, (_, at) => at + 1)].map(
        (chunk) => `import-${id}-chunk-${chunk}`,
      ),
    );
    expect(await store.find(SELLER, id)).toMatchObject({ status: 'done', rowsProcessed: 1_200 });
  });
});
