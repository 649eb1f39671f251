import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  testEngines,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
} from '@marketplace/database/testing';
import { AppError, ManualClock } from '@marketplace/platform';
import type { EventStore, IdempotencyScope, IdempotentRequest, RecordIdempotencyKey } from '../src/index.js';
import {
  createPostgresEventStore,
  eventStoreMigrations,
  IDEMPOTENCY_KEY_RETENTION_MS,
  IdempotencyKeys,
  IdempotencyKeysTaken,
  idempotencyKeysMigration,
  requestHashOf,
} from '../src/index.js';
import { type StockEvent } from './support/stock.decider.js';

const START = Date.UTC(2026, 0, 2, 3, 4, 5);

describe.each(testEngines())('idempotency keys on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let store: EventStore;
  let keys: IdempotencyKeys;
  const clock = new ManualClock(START);
  let streams = 0;
  let keyCount = 0;

  const requestOf = (
    key: string,
    quantity: number,
    scope: IdempotencyScope = 'account:1',
  ): IdempotentRequest => ({
    scope,
    key,
    requestHash: requestHashOf('AddStock', { quantity }),
  });
  const freshKey = () => `key-${++keyCount}`;

  /** A create like a service's: a new stream, its key recorded in the transaction of its first event. */
  const addStock = (quantity: number, options: { failAfterAppend?: boolean; delayMs?: number } = {}) => {
    return async (recordKey: RecordIdempotencyKey | undefined): Promise<string> => {
      const streamId = `stock_${++streams}`;
      await db.transaction(async (tx) => {
        await recordKey?.(tx, streamId);
        await store.append(
          {
            streamId,
            streamType: 'stock',
            expectedVersion: 'no_stream',
            events: [{ type: 'StockAdded', data: { quantity } } satisfies StockEvent],
            metadata: {},
            now: clock.now(),
          },
          tx,
        );
        if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
        if (options.failAfterAppend) throw new Error('the database connection was lost during COMMIT');
      });
      return streamId;
    };
  };
  const replayed = async (streamId: string): Promise<string> => `replayed ${streamId}`;
  const streamCount = async (): Promise<number> => {
    const { rows } = await db.query<{ count: number }>(
      `select count(distinct stream_id)::int as count from "${schema}".events`,
    );
    return rows[0]?.count ?? 0;
  };

  beforeAll(async () => {
    db = await create();
    schema = freshSchemaName('es_idempotency');
    await migrate(db, schema, [...eventStoreMigrations, idempotencyKeysMigration]);
    store = createPostgresEventStore({ db, schema });
    keys = new IdempotencyKeys(db, schema, clock);
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  it('creates without a key every time, recording nothing', async () => {
    const before = await streamCount();
    const first = await keys.createOnce(undefined, { create: addStock(1), replay: replayed });
    const second = await keys.createOnce(undefined, { create: addStock(1), replay: replayed });
    expect(first).not.toBe(second);
    expect(await streamCount()).toBe(before + 2);
  });

  it('answers a repeated key with a replay of the stream it created, creating nothing more', async () => {
    const key = freshKey();
    const created = await keys.createOnce(requestOf(key, 5), { create: addStock(5), replay: replayed });
    const before = await streamCount();
    const again = await keys.createOnce(requestOf(key, 5), { create: addStock(5), replay: replayed });
    expect(again).toBe(`replayed ${created}`);
    expect(await keys.find(db, requestOf(key, 5))).toBe(created);
    expect(await streamCount()).toBe(before);
  });

  it('refuses the same key with a different request as an idempotency conflict', async () => {
    const key = freshKey();
    await keys.createOnce(requestOf(key, 5), { create: addStock(5), replay: replayed });
    const before = await streamCount();
    const conflicting = keys.createOnce(requestOf(key, 6), { create: addStock(6), replay: replayed });
    await expect(conflicting).rejects.toBeInstanceOf(AppError);
    await expect(conflicting).rejects.toMatchObject({ kind: 'idempotency_conflict' });
    expect(await streamCount()).toBe(before);
  });

  it('keeps keys of different scopes apart', async () => {
    const key = freshKey();
    const mine = await keys.createOnce(requestOf(key, 5, 'account:1'), {
      create: addStock(5),
      replay: replayed,
    });
    const theirs = await keys.createOnce(requestOf(key, 5, 'account:2'), {
      create: addStock(5),
      replay: replayed,
    });
    expect(theirs).not.toBe(mine);
    expect(theirs).toMatch(/^stock_\d+$/);
  });

  it('records nothing when the create fails, so the same key can be retried', async () => {
    const key = freshKey();
    const before = await streamCount();
    await expect(
      keys.createOnce(requestOf(key, 3), {
        create: addStock(3, { failAfterAppend: true }),
        replay: replayed,
      }),
    ).rejects.toThrow('COMMIT');
    expect(await keys.find(db, requestOf(key, 3))).toBeUndefined();
    expect(await streamCount()).toBe(before);
    const retried = await keys.createOnce(requestOf(key, 3), { create: addStock(3), replay: replayed });
    expect(retried).toMatch(/^stock_\d+$/);
    expect(await streamCount()).toBe(before + 1);
  });

  it('creates once for concurrent requests with one key: the others wait for its commit and replay it', async () => {
    const key = freshKey();
    const before = await streamCount();
    // The delay holds the first transaction open after it recorded the key, so on PostgreSQL the others'
    // inserts meet the uncommitted row (PGlite runs transactions one after another).
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        keys.createOnce(requestOf(key, 9), { create: addStock(9, { delayMs: 100 }), replay: replayed }),
      ),
    );
    expect(await streamCount()).toBe(before + 1);
    const created = answers.filter((answer) => answer.startsWith('stock_'));
    expect(created).toHaveLength(1);
    expect(answers.filter((answer) => answer === `replayed ${created[0]}`)).toHaveLength(4);
  });

  it('refuses a concurrent request with the same key and another body once the first commits', async () => {
    const key = freshKey();
    const [first, second] = await Promise.allSettled([
      keys.createOnce(requestOf(key, 1), { create: addStock(1, { delayMs: 100 }), replay: replayed }),
      keys.createOnce(requestOf(key, 2), { create: addStock(2, { delayMs: 100 }), replay: replayed }),
    ]);
    const outcomes = [first, second].map((outcome) =>
      outcome.status === 'fulfilled' ? 'created' : (outcome.reason as AppError).kind,
    );
    expect(outcomes.sort()).toEqual(['created', 'idempotency_conflict']);
  });

  it('fails a create that forgets to record its key', async () => {
    await expect(
      keys.createOnce(requestOf(freshKey(), 1), { create: () => addStock(1)(undefined), replay: replayed }),
    ).rejects.toThrow('did not record it');
  });

  it('finds and records a batch of keys in one statement each: seen, unseen, conflicting, other scope', async () => {
    const [seen, unseen, conflicting, otherScope] = [freshKey(), freshKey(), freshKey(), freshKey()];
    const created = await keys.createOnce(requestOf(seen, 1), { create: addStock(1), replay: replayed });
    await keys.createOnce(requestOf(conflicting, 1), { create: addStock(1), replay: replayed });
    await keys.createOnce(requestOf(otherScope, 1, 'account:2'), { create: addStock(1), replay: replayed });

    const found = await keys.findMany(db, [
      requestOf(seen, 1),
      requestOf(unseen, 1),
      requestOf(conflicting, 2),
      requestOf(otherScope, 1),
    ]);
    expect(found.slice(0, 2)).toEqual([created, undefined]);
    expect(found[2]).toMatchObject({ kind: 'idempotency_conflict' });
    expect(found[3]).toBeUndefined();

    await db.transaction((tx) =>
      keys.recordMany(tx, [
        { request: requestOf(unseen, 1), streamId: 'stock_batch_1' },
        { request: requestOf(otherScope, 1), streamId: 'stock_batch_2' },
      ]),
    );
    expect(await keys.findMany(db, [requestOf(unseen, 1), requestOf(otherScope, 1)])).toEqual([
      'stock_batch_1',
      'stock_batch_2',
    ]);
  });

  it('refuses a batch whose keys a concurrent request recorded first, naming them; the batch writes nothing', async () => {
    const [raced, free] = [freshKey(), freshKey()];
    // The single create holds its transaction open after recording `raced`: the batch waits, then finds it taken.
    const single = keys.createOnce(requestOf(raced, 7), {
      create: addStock(7, { delayMs: 100 }),
      replay: replayed,
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const batch = db.transaction((tx) =>
      keys.recordMany(tx, [
        { request: requestOf(free, 7), streamId: 'stock_free' },
        { request: requestOf(raced, 7), streamId: 'stock_raced' },
      ]),
    );
    await expect(batch).rejects.toBeInstanceOf(IdempotencyKeysTaken);
    await expect(batch).rejects.toMatchObject({ keys: [raced] });
    const created = await single;
    expect(await keys.findMany(db, [requestOf(free, 7), requestOf(raced, 7)])).toEqual([undefined, created]);
  });

  it(`keeps keys for ${IDEMPOTENCY_KEY_RETENTION_MS / 3_600_000} hours, then the purge forgets them`, async () => {
    const key = freshKey();
    const created = await keys.createOnce(requestOf(key, 4), { create: addStock(4), replay: replayed });
    clock.advance(IDEMPOTENCY_KEY_RETENTION_MS);
    await keys.purgeExpired();
    expect(await keys.find(db, requestOf(key, 4))).toBe(created);
    clock.advance(1);
    expect(await keys.purgeExpired()).toBeGreaterThanOrEqual(1);
    expect(await keys.find(db, requestOf(key, 4))).toBeUndefined();
  });
});
