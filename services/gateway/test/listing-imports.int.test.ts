import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { migrate, type Database, type Transaction } from '@marketplace/database';
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
import type { ApplyChunk, WrittenListing } from '../src/contexts/listings/imports/import.ports.js';
import {
  IMPORT_CHUNK_ROWS,
  runImport,
  startImportWorker,
} from '../src/contexts/listings/imports/import.worker.js';
import { DEFAULT_IMPORT_PACING, paceImport } from '../src/contexts/listings/imports/pace-import.js';

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

/** The spreadsheet row numbers of tableOf(count)'s valid rows (the header is row 1). */
const validRowsOf = (count: number): number[] =>
  Array.from({ length: count }, (_, at) => at).flatMap((at) => (at % 500 === 499 ? [] : [at + 2]));

/** The valid rows cut into chunks of the sizes given, the last size repeated: each chunk's first row. */
const firstRowsOf = (
  valid: readonly number[],
  sizes: readonly number[],
): { first: number; rows: number }[] => {
  const chunks: { first: number; rows: number }[] = [];
  for (let at = 0; at < valid.length;) {
    const size = sizes[Math.min(chunks.length, sizes.length - 1)] ?? 1;
    chunks.push({ first: valid[at] ?? -1, rows: Math.min(size, valid.length - at) });
    at += size;
  }
  return chunks;
};

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

  it('applies 2,500 rows in chunks of the sizes its pace asks, reports bad cells by row and column, shows only to its seller', async () => {
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
    const sizes = [25, 50, 100, 40, 400];
    const paced: { chunksBefore: number; written: WrittenListing | undefined }[] = [];
    await runImport(store, bulk.apply, claimed!, {
      first: async () => sizes[0]!,
      next: async (written) => {
        paced.push({ chunksBefore: bulk.calls.length, written });
        return sizes[Math.min(paced.length, sizes.length - 1)]!;
      },
    });

    // 2,495 valid rows (5 bad prices) in chunks of the sizes asked, each keyed by its first row; the pace is
    // told after every chunk the last listing it wrote (the catalog applies it last).
    const chunks = firstRowsOf(validRowsOf(2_500), sizes);
    expect(bulk.calls).toEqual(
      chunks.map(({ first, rows }) => ({ key: `import-${id}-chunk-${first}`, items: rows })),
    );
    expect(paced).toEqual(
      chunks.map(({ rows }, chunk) => ({
        chunksBefore: chunk + 1,
        written: { sellerAccountId: SELLER, productId: `product_${rows - 1}`, version: 1 },
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
    // 1,198 valid rows in chunks of IMPORT_CHUNK_ROWS; the second chunk's first call failed and was sent again
    // with its key.
    const [first, ...others] = firstRowsOf(validRowsOf(1_200), [IMPORT_CHUNK_ROWS]).map(
      (chunk) => `import-${id}-chunk-${chunk.first}`,
    );
    expect(bulk.calls.map((call) => call.key)).toEqual([first, ...others.slice(0, 1), ...others]);
    expect(await store.find(SELLER, id)).toMatchObject({ status: 'done', rowsProcessed: 1_200 });
  });

  it("takes turns: another seller's import uploaded later is applied before the first one's last chunk", async () => {
    // A schema of its own: no import the other cases leave queued is claimed here.
    const turnsSchema = freshSchemaName('listing_import_turns');
    await migrate(db, turnsSchema, LISTING_IMPORT_MIGRATIONS);
    const turns = new ListingImportsTable(db, turnsSchema);
    const [large, small] = [randomUUID(), randomUUID()];
    for (const [id, sellerAccountId, count] of [
      [large, SELLER, 1_200],
      [small, SELLER + 1, 100],
    ] as const) {
      await turns.create({
        id,
        sellerAccountId,
        mode: 'create',
        format: 'csv',
        rows: storedRowsOf(importRowsOf(tableOf(count))),
      });
    }
    const bulk = fakeBulk();
    // Turns of one chunk each: the large import hands the worker back after every chunk.
    const worker = startImportWorker({
      store: turns,
      apply: bulk.apply,
      logger: createLogger({ service: 'gateway', level: 'silent' }),
      pollMs: 50,
      turnMs: 0,
    });
    try {
      for (let waited = 0; waited < 30_000; waited += 50) {
        const views = await Promise.all([turns.find(SELLER, large), turns.find(SELLER + 1, small)]);
        if (views.every((view) => view?.status === 'done')) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await worker.stop();
      await dropSchema(db, turnsSchema);
    }
    const keys = bulk.calls.map((call) => call.key);
    const largeChunks = firstRowsOf(validRowsOf(1_200), [IMPORT_CHUNK_ROWS]).map(
      ({ first }) => `import-${large}-chunk-${first}`,
    );
    expect(keys).toEqual([largeChunks[0], `import-${small}-chunk-2`, ...largeChunks.slice(1)]);
  });

  it('sends a chunk planned before a crash again as it was, whatever size is asked next', async () => {
    const id = randomUUID();
    await store.create({
      id,
      sellerAccountId: SELLER,
      mode: 'create',
      format: 'csv',
      rows: storedRowsOf(importRowsOf(tableOf(100))),
    });
    const planned = await store.nextChunk(id, 10);
    expect(planned?.chunk).toBe(2);
    expect(planned?.rows.map((row) => row.row)).toEqual(Array.from({ length: 10 }, (_, at) => at + 2));
    // The worker died before the bulk call answered; the next one asks for another size.
    expect(await store.nextChunk(id, 40)).toEqual(planned);
    await store.recordChunk(
      id,
      planned!.rows.map(({ row }) => ({ row, status: 'created', productId: `product_${row}`, errors: [] })),
      60_000,
    );
    const after = await store.nextChunk(id, 40);
    expect(after?.chunk).toBe(12);
    expect(after?.rows).toHaveLength(40);
  });

  it('applies an import stored with every chunk planned on arrival (before 002-unplanned-rows) as it was planned', async () => {
    const id = randomUUID();
    await store.create({
      id,
      sellerAccountId: SELLER,
      mode: 'create',
      format: 'csv',
      rows: storedRowsOf(importRowsOf(tableOf(600))),
    });
    await db.query(
      `UPDATE ${schema}.import_rows SET chunk = (row_number - 2) / 250 WHERE import_id = $1 AND status IS NULL`,
      [id],
    );
    const chunk = await store.nextChunk(id, 10);
    expect(chunk?.chunk).toBe(0);
    expect(chunk?.rows).toHaveLength(250);
  });

  it('completes paced by foreground requests it slows down: in the smallest chunks, with rests', async () => {
    const id = randomUUID();
    await store.create({
      id,
      sellerAccountId: SELLER,
      mode: 'create',
      format: 'csv',
      rows: storedRowsOf(importRowsOf(tableOf(300))),
    });
    const bulk = fakeBulk();
    // Every request overlapping a chunk took 40 ms, every one at rest 5 ms.
    const pace = paceImport(
      async () => true,
      { overlapping: () => [40, 40], within: () => [5] },
      { ...DEFAULT_IMPORT_PACING, windowMs: 20 },
    );
    await runImport(store, bulk.apply, { id, sellerAccountId: SELLER, mode: 'create' }, pace);
    const { minRows } = DEFAULT_IMPORT_PACING.limits;
    expect(bulk.calls.map((call) => call.items)).toEqual(
      firstRowsOf(validRowsOf(300), [minRows]).map((chunk) => chunk.rows),
    );
    expect(await store.find(SELLER, id)).toMatchObject({ status: 'done', rowsProcessed: 300 });
  });
  describe('with idempotency keys (docs/idempotency.md)', () => {
    // A schema of its own: the imports stored here are never claimed by the workers of the other cases.
    const keysSchema = freshSchemaName('listing_import_keys');
    let keyed: ListingImportsTable;
    const rows = storedRowsOf(importRowsOf(tableOf(30)));
    const upload = (sellerAccountId: number, key: string, requestHash = 'hash-a') =>
      keyed.create({
        id: randomUUID(),
        sellerAccountId,
        mode: 'create',
        format: 'csv',
        rows,
        idempotency: { key, requestHash },
      });
    const counted = async (sellerAccountId: number) => {
      const {
        rows: [count],
      } = await db.query<{ imports: number; rows: number }>(
        `SELECT count(DISTINCT i.id)::int AS imports, count(r.row_number)::int AS rows
           FROM ${keysSchema}.imports i JOIN ${keysSchema}.import_rows r ON r.import_id = i.id
          WHERE i.seller_account_id = $1`,
        [sellerAccountId],
      );
      return count;
    };

    beforeAll(async () => {
      await migrate(db, keysSchema, LISTING_IMPORT_MIGRATIONS);
      keyed = new ListingImportsTable(db, keysSchema);
    });

    afterAll(async () => {
      await dropSchema(db, keysSchema);
    });

    it("answers a key's second upload with the first import, storing no rows again; another seller's key is its own", async () => {
      const first = await upload(SELLER, 'upload-1');
      expect(first).toEqual({ id: expect.any(String), rowsTotal: 30, requestHash: 'hash-a' });
      expect(await upload(SELLER, 'upload-1')).toEqual(first);
      // The route compares the digests: a different file under the key finds the first import's.
      expect(await upload(SELLER, 'upload-1', 'hash-b')).toEqual(first);
      expect(await keyed.findByKey(SELLER, 'upload-1')).toEqual(first);
      expect(await counted(SELLER)).toEqual({ imports: 1, rows: 30 });

      const other = await upload(SELLER + 1, 'upload-1');
      expect(other.id).not.toBe(first.id);
      expect(await keyed.findByKey(SELLER + 1, 'upload-1')).toEqual(other);
      expect(await keyed.find(SELLER, other.id)).toBeUndefined();
      expect(await counted(SELLER + 1)).toEqual({ imports: 1, rows: 30 });
      expect(await keyed.findByKey(SELLER, 'upload-2')).toBeUndefined();
    });

    it('stores one import for five uploads racing with one key', async () => {
      const seller = SELLER + 2;
      const answers = await Promise.all(Array.from({ length: 5 }, () => upload(seller, 'raced')));
      expect(new Set(answers.map((answer) => answer.id)).size).toBe(1);
      expect(await counted(seller)).toEqual({ imports: 1, rows: 30 });
    });

    it('stores a new import when the purge forgets the key between the conflicting insert and its read', async () => {
      const seller = SELLER + 4;
      const first = await upload(seller, 'purged-between');
      // The purge's effect, made in the upload's own transaction right after its insert met the key (one
      // session on PGlite: another connection could not run there meanwhile).
      const bound = <T extends object>(target: T, property: string | symbol): unknown => {
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      };
      const purgingDb = new Proxy(db, {
        get: (target, property) =>
          property !== 'transaction'
            ? bound(target, property)
            : (work: (tx: Transaction) => Promise<unknown>) =>
                target.transaction((tx) =>
                  work(
                    new Proxy(tx, {
                      get: (txTarget, txProperty) =>
                        txProperty !== 'query'
                          ? bound(txTarget, txProperty)
                          : async (sql: string, params?: unknown[]) => {
                              const result = await txTarget.query(sql, params);
                              if (
                                sql.includes('INSERT INTO') &&
                                sql.includes('ON CONFLICT') &&
                                result.rowCount === 0
                              )
                                await txTarget.query(
                                  `UPDATE ${keysSchema}.imports SET idempotency_key = NULL, request_hash = NULL
                                    WHERE idempotency_key = 'purged-between'`,
                                );
                              return result;
                            },
                    }),
                  ),
                ),
      });
      const again = await new ListingImportsTable(purgingDb, keysSchema).create({
        id: randomUUID(),
        sellerAccountId: seller,
        mode: 'create',
        format: 'csv',
        rows,
        idempotency: { key: 'purged-between', requestHash: 'hash-a' },
      });
      expect(again.id).not.toBe(first.id);
      expect(await keyed.findByKey(seller, 'purged-between')).toEqual(again);
      expect(await counted(seller)).toEqual({ imports: 2, rows: 60 });
    });

    it('forgets a key 24 hours after its upload, and only then: the same key stores a new import', async () => {
      const seller = SELLER + 3;
      const [old, recent] = [await upload(seller, 'day-old'), await upload(seller, 'hour-old')];
      await db.query(`UPDATE ${keysSchema}.imports SET created_at = now() - $2::interval WHERE id = $1`, [
        old.id,
        '24 hours 1 minute',
      ]);
      await db.query(`UPDATE ${keysSchema}.imports SET created_at = now() - $2::interval WHERE id = $1`, [
        recent.id,
        '23 hours 59 minutes',
      ]);
      expect(await keyed.purgeExpiredKeys()).toBe(1);
      expect(await keyed.findByKey(seller, 'hour-old')).toEqual(recent);
      expect(await keyed.findByKey(seller, 'day-old')).toBeUndefined();
      // The import itself stays readable.
      expect(await keyed.find(seller, old.id)).toMatchObject({ id: old.id, rowsTotal: 30 });
      const again = await upload(seller, 'day-old');
      expect(again.id).not.toBe(old.id);
      expect(await counted(seller)).toEqual({ imports: 3, rows: 90 });
    });
  });
});
