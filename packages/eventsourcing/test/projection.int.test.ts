import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import {
  createEmbeddedEventLog,
  type DeliveredMessage,
  type EventLog,
  type LogConsumer,
} from '@marketplace/eventlog';
import {
  createPostgresEventStore,
  eventIdOf,
  startOutboxRelay,
  startProjection,
  type OutboxRelay,
} from '../src/index.js';
import { migratedSchema } from './support/engines.js';
import { eventually } from './support/eventually.js';
import { RecordingEventLog } from './support/recording-event-log.js';
import type { StockEvent } from './support/stock.decider.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
const TOPIC = 'marketplace.stock.v1';
const FAST_RETRY = { initialDelayMs: 10, maxDelayMs: 40 };

const encode = (event: { data: unknown }) => ({
  value: new TextEncoder().encode(JSON.stringify(event.data)),
  contentType: 'application/json',
});
const decode = (message: DeliveredMessage): StockEvent['data'] =>
  JSON.parse(new TextDecoder().decode(message.value)) as StockEvent['data'];

describe.each(testEngines())('projection on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let logSchema: string;
  let log: EventLog;
  let relay: OutboxRelay;
  const subscriptions: LogConsumer[] = [];

  /** A read model whose writes are not idempotent on their own: applying an event twice would count it twice. */
  const project = async (group: string, fail: (message: DeliveredMessage) => boolean = () => false) => {
    const subscription = await startProjection({
      log,
      db,
      schema,
      topic: TOPIC,
      group,
      decode,
      apply: async (tx, data, message) => {
        await tx.query(
          `insert into ${schema}.stock_levels (projection, stream_id, quantity) values ($1, $2, $3)
           on conflict (projection, stream_id) do update set quantity = stock_levels.quantity + excluded.quantity`,
          [group, message.key, data.quantity],
        );
        if (fail(message)) throw new Error('the read model failed after writing');
      },
    });
    subscriptions.push(subscription);
  };
  const levelsOf = async (group: string): Promise<Record<string, number>> => {
    const { rows } = await db.query<{ stream_id: string; quantity: number }>(
      `select stream_id, quantity from ${schema}.stock_levels where projection = $1`,
      [group],
    );
    return Object.fromEntries(rows.map((row) => [row.stream_id, row.quantity]));
  };
  const append = (streamId: string, expectedVersion: number | 'no_stream', events: StockEvent[]) =>
    createPostgresEventStore({ db, schema }).append({
      streamId,
      streamType: 'stock',
      expectedVersion,
      events,
      metadata: {},
      now: NOW,
    });
  const added = (quantity: number): StockEvent => ({ type: 'StockAdded', data: { quantity } });

  beforeAll(async () => {
    db = await create();
    schema = await migratedSchema(db, 'es_projection');
    await db.query(
      `create table ${schema}.stock_levels (projection text, stream_id text, quantity integer not null,
         primary key (projection, stream_id))`,
    );
    logSchema = freshSchemaName('es_projection_log');
    log = await createEmbeddedEventLog({ db, schema: logSchema, pollIntervalMs: 50, retry: FAST_RETRY });
    relay = startOutboxRelay({
      db,
      schema,
      log,
      name: 'stock',
      encode,
      pollIntervalMs: 20,
      retry: FAST_RETRY,
    });
  });

  afterAll(async () => {
    await Promise.all(subscriptions.map((subscription) => subscription.close()));
    await relay.stop();
    await log.close();
    await dropSchema(db, logSchema);
    await dropSchema(db, schema);
    await db.close();
  });

  it('applies each event once although the log delivers it twice', async () => {
    await project('levels-twice');
    await append('stock_1', 'no_stream', [added(5), added(2)]);
    await eventually(async () => expect(await levelsOf('levels-twice')).toEqual({ stock_1: 7 }));

    // What a relay does when it crashes after publishing and before its checkpoint: publish the batch again.
    const recorder = new RecordingEventLog();
    const replay = startOutboxRelay({
      db,
      schema,
      log: recorder,
      name: 'replay',
      encode,
      pollIntervalMs: 20,
    });
    await eventually(() => expect(recorder.published).toHaveLength(2));
    await replay.stop();
    await log.publish(TOPIC, recorder.published);
    // Same stream, so same partition: applied only after the duplicates were handled.
    await append('stock_1', 2, [added(1)]);

    await eventually(async () => expect(await levelsOf('levels-twice')).toEqual({ stock_1: 8 }));
    const { rows } = await db.query<{ applied: string }>(
      `select count(*) as applied from ${schema}.projection_applied_events where projection = 'levels-twice'`,
    );
    expect(rows[0]!.applied).toBe('3');
  });

  it('records nothing for an event whose apply failed, so the redelivery applies it', async () => {
    let failures = 0;
    await project('levels-failing', () => failures++ < 2);
    await append('stock_2', 'no_stream', [added(4)]);

    await eventually(async () => expect(await levelsOf('levels-failing')).toMatchObject({ stock_2: 4 }));
    expect(failures).toBeGreaterThan(2);
  });
});

describe('eventIdOf', () => {
  it('refuses a message without ce_id rather than guessing an identity', () => {
    const message: DeliveredMessage = {
      topic: TOPIC,
      partition: 1,
      offset: '9',
      key: 'k',
      value: new Uint8Array(),
      headers: {},
    };
    expect(() => eventIdOf(message)).toThrow(`message ${TOPIC}/1/9 has no ce_id header`);
  });
});
