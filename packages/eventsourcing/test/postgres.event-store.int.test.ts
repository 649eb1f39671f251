import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database, Transaction } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import {
  createPostgresEventStore,
  onEventsAppended,
  handleCommand,
  WrongExpectedVersionError,
  type CompanionWrite,
  type EventStore,
} from '../src/index.js';
import { dropSchema, migratedSchema } from './support/engines.js';
import { stockCommand, stockDecider, type StockEvent } from './support/stock.decider.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const added = (quantity: number): StockEvent => ({ type: 'StockAdded', data: { quantity } });

describe.each(testEngines())('PostgreSQL event store on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let store: EventStore;
  let streams = 0;
  const newStream = () => `stock_${++streams}`;
  const append = (streamId: string, expectedVersion: number | 'no_stream' | 'any', events: StockEvent[]) =>
    store.append({ streamId, streamType: 'stock', expectedVersion, events, metadata: {}, now: NOW });

  beforeAll(async () => {
    db = await create();
    schema = await migratedSchema(db, 'es_store');
    store = createPostgresEventStore({ db, schema });
  });

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  it('reads back what it appended, in version order, with the envelope', async () => {
    const streamId = newStream();
    const metadata = {
      actor: { kind: 'seller' as const, id: '7' },
      correlationId: 'corr-1',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    };
    // Quotes, backslashes and braces must survive the trip through a jsonb array parameter.
    const awkward = { type: 'StockAdded' as const, data: { quantity: 1, note: 'a "b" \\ {c} \u00e9' } };
    const appended = await store.append({
      streamId,
      streamType: 'stock',
      expectedVersion: 'no_stream',
      events: [added(5), awkward],
      metadata,
      now: NOW,
    });

    const read = await store.readStream<StockEvent>(streamId);
    expect(read.version).toBe(2);
    expect(read.events).toEqual(appended);
    expect(read.events.map(({ version, type, data }) => ({ version, type, data }))).toEqual([
      { version: 1, type: 'StockAdded', data: { quantity: 5 } },
      { version: 2, type: 'StockAdded', data: awkward.data },
    ]);
    expect(read.events[0]).toMatchObject({ streamId, streamType: 'stock', metadata, occurredAt: NOW });
    expect(read.events[0]!.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(BigInt(read.events[1]!.globalPosition)).toBeGreaterThan(BigInt(read.events[0]!.globalPosition));
  });

  it('answers an append with the events as a read returns them, alone, in a transaction and with a companion', async () => {
    await db.query(`create table ${schema}.answer_notes (stream_id text)`);
    const streamId = newStream();
    // What handleCommand sends: metadata with properties left undefined, which the store does not keep.
    const metadata = { actor: { kind: 'seller' as const, id: '7' }, correlationId: undefined };
    const appendAt = (expectedVersion: number | 'no_stream', events: StockEvent[], tx?: Transaction) =>
      store.append(
        {
          streamId,
          streamType: 'stock',
          expectedVersion,
          events,
          metadata,
          now: NOW,
          companion: {
            sql: ({ whenAppended, firstParam }) =>
              `insert into ${schema}.answer_notes select $${firstParam} where ${whenAppended}`,
            params: [streamId],
          },
        },
        tx,
      );
    const alone = await appendAt('no_stream', [added(1), added(2)]);
    const inTransaction = await db.transaction((tx) => appendAt(2, [added(3)], tx));

    const { events } = await store.readStream<StockEvent>(streamId);
    expect([...alone, ...inTransaction]).toStrictEqual(events);
    expect(events.map(({ version }) => version)).toEqual([1, 2, 3]);
    expect(events[0]!.metadata).toStrictEqual({ actor: { kind: 'seller', id: '7' } });
  });

  it('reads a stream that does not exist as version 0 with no events', async () => {
    await expect(store.readStream('stock_never')).resolves.toEqual({ version: 0, events: [] });
  });

  it('appends after the expected version and refuses a stale, a future or a no-stream expectation', async () => {
    const streamId = newStream();
    await append(streamId, 'no_stream', [added(1)]);
    await expect(append(streamId, 1, [added(2)])).resolves.toMatchObject([{ version: 2 }]);

    await expect(append(streamId, 1, [added(3)])).rejects.toBeInstanceOf(WrongExpectedVersionError);
    await expect(append(streamId, 5, [added(3)])).rejects.toBeInstanceOf(WrongExpectedVersionError);
    await expect(append(streamId, 'no_stream', [added(3)])).rejects.toBeInstanceOf(WrongExpectedVersionError);
    await expect(append(newStream(), 1, [added(3)])).rejects.toBeInstanceOf(WrongExpectedVersionError);
    expect((await store.readStream(streamId)).version).toBe(2);
  });

  it("appends at the stream's end with expected version any", async () => {
    const streamId = newStream();
    await append(streamId, 'any', [added(1)]);
    await expect(append(streamId, 'any', [added(2), added(3)])).resolves.toMatchObject([
      { version: 2 },
      { version: 3 },
    ]);
  });

  it('lets exactly one of many concurrent appends at one version win', async () => {
    const streamId = newStream();
    await append(streamId, 'no_stream', [added(1)]);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => append(streamId, 1, [added(i)])),
    );

    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const losers = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(losers).toHaveLength(9);
    for (const loser of losers) expect(loser.reason).toBeInstanceOf(WrongExpectedVersionError);
    expect((await store.readStream(streamId)).version).toBe(2);
  });

  it('appends every one of concurrent appends expecting any version, one after the other', async () => {
    const streamId = newStream();
    const appended = await Promise.all(
      Array.from({ length: 5 }, (_, i) => append(streamId, 'any', [added(i)])),
    );
    expect(appended.map(([event]) => event!.version).sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('lets concurrent commands with retries all succeed, each deciding on the latest state', async () => {
    const streamId = newStream();
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        handleCommand({
          store,
          decider: stockDecider,
          streamId,
          streamType: 'stock',
          command: stockCommand('AddStock', 1),
          retryOnConflict: 10,
        }),
      ),
    );
    expect(results.map((result) => result.version).sort()).toEqual([1, 2, 3, 4, 5]);
    expect((await store.readStream(streamId)).events.map((event) => event.version)).toEqual([1, 2, 3, 4, 5]);
  });

  it("commits the events with the caller's own rows, or neither", async () => {
    await db.query(`create table ${schema}.stock_names (stream_id text primary key)`);
    const streamId = newStream();
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`insert into ${schema}.stock_names values ($1)`, [streamId]);
        await handleCommand({
          store,
          decider: stockDecider,
          streamId,
          streamType: 'stock',
          command: stockCommand('AddStock', 1),
          tx,
        });
        throw new Error('the caller fails after the append');
      }),
    ).rejects.toThrow('the caller fails');
    expect((await store.readStream(streamId)).version).toBe(0);

    await db.transaction(async (tx) => {
      await tx.query(`insert into ${schema}.stock_names values ($1)`, [streamId]);
      await handleCommand({
        store,
        decider: stockDecider,
        streamId,
        streamType: 'stock',
        command: stockCommand('AddStock', 1),
        tx,
      });
    });
    expect((await store.readStream(streamId)).version).toBe(1);
    expect(
      (await db.query(`select 1 from ${schema}.stock_names where stream_id = $1`, [streamId])).rowCount,
    ).toBe(1);
  });

  it("leaves the caller's transaction usable after a conflict", async () => {
    const streamId = newStream();
    await append(streamId, 'no_stream', [added(1)]);
    const version = await db.transaction(async (tx) => {
      await expect(
        store.append(
          {
            streamId,
            streamType: 'stock',
            expectedVersion: 'no_stream',
            events: [added(2)],
            metadata: {},
            now: NOW,
          },
          tx,
        ),
      ).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await store.append(
        { streamId, streamType: 'stock', expectedVersion: 1, events: [added(2)], metadata: {}, now: NOW },
        tx,
      );
      return (await store.readStream(streamId, tx)).version;
    });
    expect(version).toBe(2);
  });

  it("in the caller's transaction, a conflicting append leaves none of its events, even those that fitted", async () => {
    const streamId = newStream();
    await append(streamId, 'no_stream', [added(1), added(2)]);
    const versionsAfterConflict: string[] = [];
    const version = await db.transaction(async (tx) => {
      // Expecting version 1, these two would be versions 2 and 3: 2 is taken, 3 is free.
      await expect(
        store.append(
          {
            streamId,
            streamType: 'stock',
            expectedVersion: 1,
            events: [added(3), added(4)],
            metadata: {},
            now: NOW,
          },
          tx,
        ),
      ).rejects.toBeInstanceOf(WrongExpectedVersionError);
      const { rows } = await tx.query<{ version: number }>(
        `select version from ${schema}.events where stream_id = $1 order by version`,
        [streamId],
      );
      versionsAfterConflict.push(...rows.map((row) => String(row.version)));
      await store.append(
        { streamId, streamType: 'stock', expectedVersion: 2, events: [added(5)], metadata: {}, now: NOW },
        tx,
      );
      return (await store.readStream(streamId, tx)).version;
    });
    expect(versionsAfterConflict).toEqual(['1', '2']);
    expect(version).toBe(3);
    const read = await store.readStream<StockEvent>(streamId);
    expect(read.events.map(({ version, data }) => [version, data.quantity])).toEqual([
      [1, 1],
      [2, 2],
      [3, 5],
    ]);
  });

  it("writes a companion row in the append's own statement, only when every event goes in", async () => {
    await db.query(
      `create table ${schema}.stock_levels (stream_id text primary key, quantity int, version int)`,
    );
    const streamId = newStream();
    const level = (quantity: number, version: number): CompanionWrite => ({
      sql: ({ whenAppended, firstParam }) =>
        `insert into ${schema}.stock_levels (stream_id, quantity, version)
         select $${firstParam}, $${firstParam + 1}, $${firstParam + 2} where ${whenAppended}
         on conflict (stream_id) do update set quantity = excluded.quantity, version = excluded.version`,
      params: [streamId, quantity, version],
    });
    const appendWith = (
      expectedVersion: number | 'no_stream',
      events: StockEvent[],
      companion: CompanionWrite,
      tx?: Transaction,
    ) =>
      store.append(
        { streamId, streamType: 'stock', expectedVersion, events, metadata: {}, now: NOW, companion },
        tx,
      );
    const levelNow = async () =>
      (
        await db.query<{ quantity: number; version: number }>(
          `select quantity, version from ${schema}.stock_levels where stream_id = $1`,
          [streamId],
        )
      ).rows;

    await expect(appendWith('no_stream', [added(2)], level(2, 1))).resolves.toMatchObject([{ version: 1 }]);
    expect(await levelNow()).toEqual([{ quantity: 2, version: 1 }]);
    // Refused appends write no companion: a taken version alone, a stale guard, a partly fitting batch in a
    // transaction (version 2 free, 1 taken: the statement inserts one of two events).
    await expect(appendWith('no_stream', [added(9)], level(9, 1))).rejects.toBeInstanceOf(
      WrongExpectedVersionError,
    );
    await expect(appendWith(4, [added(9)], level(9, 5))).rejects.toBeInstanceOf(WrongExpectedVersionError);
    await db.transaction(async (tx) => {
      await expect(appendWith('no_stream', [added(9), added(9)], level(18, 2), tx)).rejects.toBeInstanceOf(
        WrongExpectedVersionError,
      );
      await appendWith(1, [added(3)], level(5, 2), tx);
    });
    expect(await levelNow()).toEqual([{ quantity: 5, version: 2 }]);
    expect((await store.readStream(streamId)).version).toBe(2);
  });

  it('writes several companions in the one statement, each with its own parameters, or none of them', async () => {
    await db.query(`create table ${schema}.companion_notes (stream_id text, note text)`);
    const streamId = newStream();
    const note = (text: string): CompanionWrite => ({
      sql: ({ whenAppended, firstParam }) =>
        `insert into ${schema}.companion_notes (stream_id, note)
         select $${firstParam}, $${firstParam + 1} where ${whenAppended}`,
      params: [streamId, text],
    });
    const appendWith = (expectedVersion: number | 'no_stream', companion: CompanionWrite[]) =>
      store.append({
        streamId,
        streamType: 'stock',
        expectedVersion,
        events: [added(1)],
        metadata: {},
        now: NOW,
        companion,
      });
    const notes = async () =>
      (
        await db.query<{ note: string }>(
          `select note from ${schema}.companion_notes where stream_id = $1 order by note`,
          [streamId],
        )
      ).rows.map(({ note }) => note);

    await appendWith('no_stream', [note('first'), note('second')]);
    expect(await notes()).toEqual(['first', 'second']);
    await expect(appendWith('no_stream', [note('refused'), note('refused too')])).rejects.toBeInstanceOf(
      WrongExpectedVersionError,
    );
    expect(await notes()).toEqual(['first', 'second']);
    await appendWith(1, []);
    expect((await store.readStream(streamId)).version).toBe(2);
  });

  it("wakes this process's relay once an append commits, not before, and not for a rollback", async () => {
    let rings = 0;
    const stop = onEventsAppended(schema, () => rings++);
    const appendNewStream = (tx: Transaction) =>
      store.append(
        {
          streamId: newStream(),
          streamType: 'stock',
          expectedVersion: 'no_stream',
          events: [added(1)],
          metadata: {},
          now: NOW,
        },
        tx,
      );
    try {
      await append(newStream(), 'no_stream', [added(1)]);
      expect(rings).toBe(1);
      await db.transaction(async (tx) => {
        await appendNewStream(tx);
        expect(rings).toBe(1);
      });
      expect(rings).toBe(2);
      await expect(
        db.transaction(async (tx) => {
          await appendNewStream(tx);
          throw new Error('the command failed after its append');
        }),
      ).rejects.toThrow('the command failed after its append');
      expect(rings).toBe(2);
    } finally {
      stop();
    }
  });

  it('no longer notifies from the commit: the append trigger is gone', async () => {
    const { rows } = await db.query(
      `select 1 from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = $1 and c.relname = 'events' and not t.tgisinternal`,
      [schema],
    );
    expect(rows).toEqual([]);
  });

  it('refuses an append the relay could not publish before touching the database', async () => {
    await expect(append(' stock', 'no_stream', [added(1)])).rejects.toThrow(/invalid stream id/);
  });
});
