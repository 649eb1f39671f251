import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { contractTestEngines } from '@marketplace/database/testing';
import {
  createPostgresEventStore,
  onEventsAppended,
  WrongExpectedVersionError,
  type CompanionWrite,
  type EventStore,
  type ExpectedVersion,
  type StreamAppend,
} from '../src/index.js';
import { dropSchema, migratedSchema } from './support/engines.js';
import type { StockEvent } from './support/stock.decider.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const added = (quantity: number): StockEvent => ({ type: 'StockAdded', data: { quantity } });

/** The multi-stream append (`EventStore.appendMany`): all streams or none, in one statement. */
describe.each(contractTestEngines())('multi-stream append on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let store: EventStore;
  let streams = 0;
  const newStream = () => `stock_${++streams}`;
  const part = (
    streamId: string,
    expectedVersion: ExpectedVersion,
    events: StockEvent[],
  ): StreamAppend<StockEvent> => ({
    streamId,
    streamType: 'stock',
    expectedVersion,
    events,
    metadata: { correlationId: `corr-${streamId}` },
    now: NOW,
  });
  const append = (expectedVersion: ExpectedVersion, streamId: string, events: StockEvent[]) =>
    store.append(part(streamId, expectedVersion, events));
  const versionsOf = async (streamIds: string[]) =>
    Promise.all(streamIds.map(async (streamId) => (await store.readStream(streamId)).version));

  beforeAll(async () => {
    db = await create();
    schema = await migratedSchema(db, 'es_many');
    store = createPostgresEventStore({ db, schema });
  });

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  it('appends to several streams in one transaction, each at its expected version, answered in request order', async () => {
    const [fresh, existing, anyVersion] = [newStream(), newStream(), newStream()];
    await append('no_stream', existing, [added(1)]);
    await append('no_stream', anyVersion, [added(1), added(1)]);

    const appended = await store.appendMany({
      streams: [
        part(fresh, 'no_stream', [added(5), added(6)]),
        part(existing, 1, [added(7)]),
        part(anyVersion, 'any', [added(8)]),
      ],
    });

    expect(appended.map((events) => events.map(({ streamId, version }) => [streamId, version]))).toEqual([
      [
        [fresh, 1],
        [fresh, 2],
      ],
      [[existing, 2]],
      [[anyVersion, 3]],
    ]);
    expect(appended[0]![0]).toMatchObject({ metadata: { correlationId: `corr-${fresh}` }, occurredAt: NOW });
    expect((await store.readStream(fresh)).events).toEqual(appended[0]);
    expect(await versionsOf([existing, anyVersion])).toEqual([2, 3]);
    // In request order on the log, from one transaction (the relay publishes it as one unit).
    const positions = appended.flat().map(({ globalPosition }) => BigInt(globalPosition));
    expect([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(positions);
    const { rows } = await db.query<{ transactions: string }>(
      `select count(distinct transaction_id)::text as transactions from ${schema}.events
        where stream_id = any($1::text[]) and global_position >= $2`,
      [[fresh, existing, anyVersion], appended[0]![0]!.globalPosition],
    );
    expect(rows).toEqual([{ transactions: '1' }]);
  });

  it('answers each stream with its events as a read returns them, alone, in a transaction and with a companion', async () => {
    await db.query(`create table ${schema}.answer_notes (note text)`);
    const [first, second, anyVersion] = [newStream(), newStream(), newStream()];
    await append('no_stream', anyVersion, [added(1)]);
    const companion: CompanionWrite = {
      sql: ({ whenAppended, firstParam }) =>
        `insert into ${schema}.answer_notes select $${firstParam} where ${whenAppended}`,
      params: ['appended'],
    };
    const alone = await store.appendMany({
      streams: [part(first, 'no_stream', [added(1), added(2)]), part(anyVersion, 'any', [added(3)])],
      companion,
    });
    const inTransaction = await db.transaction((tx) =>
      store.appendMany(
        { streams: [part(second, 'no_stream', [added(4)]), part(first, 2, [added(5), added(6)])] },
        tx,
      ),
    );

    const read = async (streamId: string) => (await store.readStream<StockEvent>(streamId)).events;
    expect(alone).toStrictEqual([(await read(first)).slice(0, 2), (await read(anyVersion)).slice(1)]);
    expect(inTransaction).toStrictEqual([await read(second), (await read(first)).slice(2)]);
    expect(inTransaction[1]!.map(({ version }) => version)).toEqual([3, 4]);
  });
  it('appends nothing when one stream is off its expectation, and names that stream', async () => {
    const [taken, stale, fresh] = [newStream(), newStream(), newStream()];
    await append('no_stream', taken, [added(1)]);
    await append('no_stream', stale, [added(1), added(2)]);
    const cases: [string, ExpectedVersion][] = [
      [taken, 'no_stream'], // a version taken: the unique constraint
      [stale, 1], // stale
      [stale, 5], // a version the stream never reached: the guard
      [newStream(), 1], // a stream that does not exist
    ];
    for (const [streamId, expected] of cases) {
      const refused = store.appendMany({
        streams: [part(fresh, 'no_stream', [added(3)]), part(streamId, expected, [added(4)])],
      });
      await expect(refused).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await expect(refused).rejects.toMatchObject({ streamId, expected });
    }
    expect(await versionsOf([taken, stale, fresh])).toEqual([1, 2, 0]);
  });

  it("in the caller's transaction, a conflict leaves none of the events and the transaction usable", async () => {
    const [fresh, taken] = [newStream(), newStream()];
    await append('no_stream', taken, [added(1)]);
    const after = await db.transaction(async (tx) => {
      // `fresh` fits and `taken`'s second event would fit at version 2: neither may stay.
      await expect(
        store.appendMany(
          { streams: [part(fresh, 'no_stream', [added(2)]), part(taken, 'no_stream', [added(3), added(4)])] },
          tx,
        ),
      ).rejects.toMatchObject({ streamId: taken });
      const { rows } = await tx.query<{ count: string }>(
        `select count(*)::text as count from ${schema}.events where stream_id = any($1::text[])`,
        [[fresh, taken]],
      );
      await store.appendMany(
        { streams: [part(fresh, 'no_stream', [added(2)]), part(taken, 1, [added(3)])] },
        tx,
      );
      return rows[0]?.count;
    });
    expect(after).toBe('1');
    expect(await versionsOf([fresh, taken])).toEqual([1, 2]);
  });

  it('commits with the rest of the transaction, or rolls back with it', async () => {
    const [kept, rolledBack] = [newStream(), newStream()];
    await db.transaction((tx) => store.appendMany({ streams: [part(kept, 'no_stream', [added(1)])] }, tx));
    await expect(
      db.transaction(async (tx) => {
        await store.appendMany({ streams: [part(rolledBack, 'no_stream', [added(1)])] }, tx);
        throw new Error('the batch failed after its append');
      }),
    ).rejects.toThrow('the batch failed after its append');
    expect(await versionsOf([kept, rolledBack])).toEqual([1, 0]);
  });

  it("writes the companion in the append's statement, only when every stream's events went in", async () => {
    await db.query(`create table ${schema}.stock_rows (stream_id text primary key, quantity int)`);
    const rowsOf = (entries: [string, number][]): CompanionWrite => ({
      sql: ({ whenAppended, firstParam: p }) =>
        `insert into ${schema}.stock_rows (stream_id, quantity)
         select s, q from unnest($${p}::text[], $${p + 1}::int[]) as r (s, q) where ${whenAppended}`,
      params: [entries.map(([streamId]) => streamId), entries.map(([, quantity]) => quantity)],
    });
    const [a, b, taken] = [newStream(), newStream(), newStream()];
    await append('no_stream', taken, [added(1)]);

    await expect(
      store.appendMany({
        streams: [part(a, 'no_stream', [added(1)]), part(taken, 'no_stream', [added(9)])],
        companion: rowsOf([
          [a, 1],
          [taken, 9],
        ]),
      }),
    ).rejects.toBeInstanceOf(WrongExpectedVersionError);
    await db.transaction(async (tx) => {
      await expect(
        store.appendMany(
          {
            streams: [part(a, 'no_stream', [added(1)]), part(taken, 'no_stream', [added(8), added(9)])],
            companion: rowsOf([[a, 1]]),
          },
          tx,
        ),
      ).rejects.toBeInstanceOf(WrongExpectedVersionError);
    });
    await store.appendMany({
      streams: [part(a, 'no_stream', [added(2)]), part(b, 'no_stream', [added(3)])],
      companion: rowsOf([
        [a, 2],
        [b, 3],
      ]),
    });
    const { rows } = await db.query(
      `select stream_id, quantity from ${schema}.stock_rows order by stream_id`,
    );
    expect(rows).toEqual([
      { stream_id: a, quantity: 2 },
      { stream_id: b, quantity: 3 },
    ]);
  });

  it('lets exactly one of two concurrent batches creating the same stream win, whole', async () => {
    const [shared, first, second] = [newStream(), newStream(), newStream()];
    const results = await Promise.allSettled([
      store.appendMany({
        streams: [part(first, 'no_stream', [added(1)]), part(shared, 'no_stream', [added(1)])],
      }),
      store.appendMany({
        streams: [part(second, 'no_stream', [added(2)]), part(shared, 'no_stream', [added(2)])],
      }),
    ]);
    expect(results.map(({ status }) => status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = results.find((result) => result.status === 'rejected');
    expect(rejected?.reason).toBeInstanceOf(WrongExpectedVersionError);
    const winner = results[0]?.status === 'fulfilled' ? 1 : 2;
    expect(await versionsOf([first, second, shared])).toEqual(winner === 1 ? [1, 0, 1] : [0, 1, 1]);
    const { events } = await store.readStream<StockEvent>(shared);
    expect(events.map(({ data }) => data.quantity)).toEqual([winner]);
  });

  it("wakes this process's relay once per committed batch, not for a refused one", async () => {
    let rings = 0;
    const stop = onEventsAppended(schema, () => rings++);
    try {
      const taken = newStream();
      await append('no_stream', taken, [added(1)]);
      rings = 0;
      await store.appendMany({
        streams: [part(newStream(), 'no_stream', [added(1)]), part(newStream(), 'no_stream', [added(1)])],
      });
      expect(rings).toBe(1);
      await expect(
        store.appendMany({ streams: [part(taken, 'no_stream', [added(1)])] }),
      ).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await db.transaction(async (tx) => {
        await store.appendMany({ streams: [part(newStream(), 'no_stream', [added(1)])] }, tx);
        expect(rings).toBe(1);
      });
      expect(rings).toBe(2);
    } finally {
      stop();
    }
  });

  it('refuses a stream named twice or one the relay could not publish, before touching the database', async () => {
    const twice = newStream();
    await expect(
      store.appendMany({ streams: [part(twice, 'no_stream', [added(1)]), part(twice, 1, [added(2)])] }),
    ).rejects.toThrow(/appears twice/);
    await expect(
      store.appendMany({
        streams: [part(newStream(), 'no_stream', [added(1)]), part(' x', 'no_stream', [])],
      }),
    ).rejects.toThrow(/invalid stream id/);
    expect(await versionsOf([twice])).toEqual([0]);
    await expect(store.appendMany({ streams: [] })).resolves.toEqual([]);
  });
});
