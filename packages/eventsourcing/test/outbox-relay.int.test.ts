import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import {
  createPostgresEventStore,
  startOutboxRelay,
  type EventStore,
  type OutboxRelay,
  type OutboxRelayOptions,
} from '../src/index.js';
import { dropSchema, migratedSchema } from './support/engines.js';
import { eventually } from './support/eventually.js';
import { RecordingEventLog } from './support/recording-event-log.js';
import type { StockEvent } from './support/stock.decider.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const added = (quantity: number): StockEvent => ({ type: 'StockAdded', data: { quantity } });
/** The test encoding: the quantity as text. The services encode protobuf. */
const encode: OutboxRelayOptions['encode'] = (event) => ({
  value: new TextEncoder().encode(JSON.stringify(event.data)),
  contentType: 'application/json',
});
const quantityOf = (value: Uint8Array): number =>
  (JSON.parse(new TextDecoder().decode(value)) as { quantity: number }).quantity;

const FAST = { pollIntervalMs: 20, standbyIntervalMs: 20, retry: { initialDelayMs: 10, maxDelayMs: 40 } };

const engines = testEngines();

describe.each(engines)('outbox relay on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let store: EventStore;
  const relays: OutboxRelay[] = [];
  let streams = 0;
  const newStream = () => `stock_${++streams}`;
  const append = (streamId: string, events: StockEvent[], streamType = 'stock') =>
    store.append({
      streamId,
      streamType,
      expectedVersion: 'any',
      events,
      metadata: { traceparent: TRACEPARENT },
      now: NOW,
    });
  const start = (log: RecordingEventLog, options: Partial<OutboxRelayOptions> = {}): OutboxRelay => {
    const relay = startOutboxRelay({ db, schema, log, name: 'stock', encode, ...FAST, ...options });
    relays.push(relay);
    return relay;
  };

  beforeAll(async () => {
    db = await create();
  });

  beforeEach(async () => {
    schema = await migratedSchema(db, 'es_relay');
    store = createPostgresEventStore({ db, schema });
  });

  afterEach(async () => {
    await Promise.all(relays.splice(0).map((relay) => relay.stop()));
    await dropSchema(db, schema);
  });

  afterAll(async () => {
    await db.close();
  });

  it("publishes each stream to its type's topic, keyed by stream, in order, as CloudEvents", async () => {
    const log = new RecordingEventLog();
    const relay = start(log);
    const [first] = await append('stock_1', [added(1), added(2)]);
    await append('stock_2', [added(3)]);
    await append('warehouse_1', [added(4)], 'warehouse');

    await eventually(() => expect(log.published).toHaveLength(4));
    expect(log.published.map(({ topic, key, value }) => [topic, key, quantityOf(value)])).toEqual([
      ['marketplace.stock.v1', 'stock_1', 1],
      ['marketplace.stock.v1', 'stock_1', 2],
      ['marketplace.stock.v1', 'stock_2', 3],
      ['marketplace.warehouse.v1', 'warehouse_1', 4],
    ]);
    expect(log.published[0]!.headers).toEqual({
      ce_specversion: '1.0',
      ce_id: first!.eventId,
      ce_type: 'marketplace.stock.v1.StockAdded',
      ce_source: '/services/stock',
      ce_subject: 'stock_1',
      ce_time: '2026-01-02T03:04:05.678Z',
      'content-type': 'application/json',
      traceparent: TRACEPARENT,
    });
    await eventually(async () => expect(await relay.lag()).toBe(0));
  });

  it('publishes in batches of batchSize without losing or repeating an event', async () => {
    const log = new RecordingEventLog();
    const streamId = newStream();
    for (let i = 1; i <= 25; i++) await append(streamId, [added(i)]);
    start(log, { batchSize: 4 });

    await eventually(() => expect(log.published).toHaveLength(25));
    expect(log.published.map(({ value }) => quantityOf(value))).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
  });

  it('keeps its checkpoint while publishing fails, then publishes everything after recovery, with no gap', async () => {
    const log = new RecordingEventLog();
    log.failPublishing();
    const relay = start(log);
    const streamId = newStream();
    await append(streamId, [added(1), added(2)]);

    await eventually(() => expect(log.publishAttempts).toBeGreaterThanOrEqual(3));
    expect(await relay.lag()).toBe(2);
    await append(streamId, [added(3)]);
    log.recover();

    await eventually(() => expect(log.published.map(({ value }) => quantityOf(value))).toEqual([1, 2, 3]));
    await eventually(async () => expect(await relay.lag()).toBe(0));
  });

  it('resumes after a restart from its checkpoint, publishing nothing twice', async () => {
    const before = new RecordingEventLog();
    const relay = start(before);
    await append(newStream(), [added(1)]);
    await eventually(() => expect(before.published).toHaveLength(1));
    await relay.stop();

    await append(newStream(), [added(2)]);
    const after = new RecordingEventLog();
    start(after);
    await eventually(() => expect(after.published.map(({ value }) => quantityOf(value))).toEqual([2]));
  });

  it('runs one active relay per schema; a standby takes over when it stops', async () => {
    const firstLog = new RecordingEventLog();
    const secondLog = new RecordingEventLog();
    const first = start(firstLog);
    await append(newStream(), [added(1)]);
    await eventually(() => expect(firstLog.published).toHaveLength(1));
    start(secondLog);

    for (let i = 2; i <= 5; i++) await append(newStream(), [added(i)]);
    await eventually(() => expect(firstLog.published).toHaveLength(5));
    await sleep(5 * FAST.standbyIntervalMs);
    expect(secondLog.published).toHaveLength(0);

    await first.stop();
    await append(newStream(), [added(6)]);
    await eventually(() => expect(secondLog.published.map(({ value }) => quantityOf(value))).toEqual([6]));
    expect(firstLog.published).toHaveLength(5);
  });

  it("publishes a quiet relay's append at once, and what is appended within batchIntervalMs after in one round", async () => {
    const log = new RecordingEventLog();
    const batchIntervalMs = 1_500;
    start(log, { batchIntervalMs });
    const streamId = newStream();
    const appendedAt = performance.now();
    await append(streamId, [added(1)]);
    await eventually(() => expect(log.publishes).toHaveLength(1));
    for (let i = 2; i <= 4; i++) await append(streamId, [added(i)]);

    await eventually(() => expect(log.published).toHaveLength(4));
    expect(log.publishes.map(({ messages }) => messages)).toEqual([1, 3]);
    expect(log.publishes[0]!.at - appendedAt).toBeLessThan(batchIntervalMs);
    // The second round started no sooner than the interval after the first (which began before its publish).
    expect(log.publishes[1]!.at - appendedAt).toBeGreaterThanOrEqual(batchIntervalMs);
    expect(log.published.map(({ value }) => quantityOf(value))).toEqual([1, 2, 3, 4]);
  });

  it('publishes what it was gathering when stopped', async () => {
    const log = new RecordingEventLog();
    const relay = start(log, { batchIntervalMs: 60_000 });
    const streamId = newStream();
    await append(streamId, [added(1)]);
    await eventually(() => expect(log.published).toHaveLength(1));
    await append(streamId, [added(2)]);
    await sleep(10 * FAST.pollIntervalMs);
    expect(log.published).toHaveLength(1);

    const started = Date.now();
    await relay.stop();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(log.published.map(({ value }) => quantityOf(value))).toEqual([1, 2]);
    expect(await relay.lag()).toBe(0);
  });

  it('refuses a negative batchIntervalMs', () => {
    expect(() => start(new RecordingEventLog(), { batchIntervalMs: -1 })).toThrow(/batchIntervalMs/);
  });

  it('stops promptly while publishing keeps failing, without moving its checkpoint', async () => {
    const log = new RecordingEventLog();
    log.failPublishing();
    const relay = start(log, { retry: { initialDelayMs: 60_000, maxDelayMs: 60_000 } });
    await append(newStream(), [added(1)]);
    await eventually(() => expect(log.publishAttempts).toBe(1));

    const started = Date.now();
    await relay.stop();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await relay.lag()).toBe(1);
  });
});

describe.each(engines.filter(({ name }) => name === 'postgres'))(
  'outbox relay and late commits on $name',
  ({ create }) => {
    let db: Database;
    let schema: string;
    let relay: OutboxRelay;
    const log = new RecordingEventLog();

    beforeAll(async () => {
      db = await create();
      schema = await migratedSchema(db, 'es_late');
      relay = startOutboxRelay({ db, schema, log, name: 'stock', encode, ...FAST });
    });

    afterAll(async () => {
      await relay.stop();
      await dropSchema(db, schema);
      await db.close();
    });

    it('publishes a transaction that committed late before the later ones, and never skips it', async () => {
      const store = createPostgresEventStore({ db, schema });
      const append = (streamId: string, quantity: number, tx?: Parameters<EventStore['append']>[1]) =>
        store.append(
          {
            streamId,
            streamType: 'stock',
            expectedVersion: 'no_stream',
            events: [added(quantity)],
            metadata: {},
            now: NOW,
          },
          tx,
        );
      let appendedByA!: () => void;
      let commitA!: () => void;
      const aAppended = new Promise<void>((resolve) => (appendedByA = resolve));
      const aMayCommit = new Promise<void>((resolve) => (commitA = resolve));
      // Transaction A appends first (it takes the lower global position) and stays open.
      const transactionA = db.transaction(async (tx) => {
        await append('stock_a', 1, tx);
        appendedByA();
        await aMayCommit;
      });
      try {
        await aAppended;
        // B appends after A and commits first.
        await append('stock_b', 2);

        // The relay sees B committed but A still running: it must hold B back.
        await sleep(10 * FAST.pollIntervalMs);
        expect(log.published).toHaveLength(0);
        expect(await relay.lag()).toBe(1);
      } finally {
        // Even when an expectation failed: an open transaction would keep the database from closing.
        commitA();
        await transactionA;
      }
      await eventually(() => expect(log.published.map(({ key }) => key)).toEqual(['stock_a', 'stock_b']));
    });
  },
);
