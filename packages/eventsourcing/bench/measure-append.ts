/**
 * Measures what the README reports: append throughput of the PostgreSQL event store and the outbox relay's
 * drain rate, on PostgreSQL (TEST_DATABASE_URL) and on PGlite in memory.
 * Run after a build: `node packages/eventsourcing/dist/bench/measure-append.js`.
 */
import {
  createEmbeddedDatabase,
  createPostgresDatabase,
  migrate,
  type Database,
} from '@marketplace/database';
import { TEST_DATABASE_URL, dropSchema, freshSchemaName } from '@marketplace/database/testing';
import type { EventLog, LogMessage } from '@marketplace/eventlog';
import { createLogger } from '@marketplace/platform';
import {
  createPostgresEventStore,
  eventStoreMigrations,
  handleCommand,
  startOutboxRelay,
  type Decider,
  type DomainEvent,
  type EventStore,
} from '../src/index.js';

const APPENDS = 2_000;
const CONCURRENCY = 8;
const BATCH = 10;

type Counted = DomainEvent<'Counted', { readonly n: number; readonly note: string }>;
const counted = (n: number): Counted => ({
  type: 'Counted',
  data: { n, note: 'a short payload like a small event' },
});
const counter: Decider<
  { type: 'Count'; data: { n: number }; metadata: { now: number; actor: { kind: 'system'; id: string } } },
  Counted,
  number
> = {
  decide: (command) => [counted(command.data.n)],
  evolve: (state) => state + 1,
  initialState: () => 0,
};

const perSecond = (count: number, ms: number): number => Math.round((count / ms) * 1_000);

const timed = async (work: () => Promise<unknown>): Promise<number> => {
  const startedAt = performance.now();
  await work();
  return performance.now() - startedAt;
};

/** A log that acknowledges at once: what is measured is the relay's reading and checkpointing. */
const discardingLog = (onPublish: (count: number) => void): EventLog => ({
  publish: async (_topic: string, messages: readonly LogMessage[]) => onPublish(messages.length),
  consume: () => Promise.reject(new Error('not used')),
  follow: () => Promise.reject(new Error('not used')),
  deleteGroup: () => Promise.reject(new Error('not used')),
  close: async () => undefined,
});

const measure = async (db: Database): Promise<Record<string, number>> => {
  const schema = freshSchemaName('es_bench');
  await migrate(db, schema, eventStoreMigrations);
  const store: EventStore = createPostgresEventStore({ db, schema });
  const append = (streamId: string, events: Counted[]) =>
    store.append({
      streamId,
      streamType: 'counter',
      expectedVersion: 'no_stream',
      events,
      metadata: {},
      now: Date.now(),
    });
  try {
    for (let i = 0; i < 200; i++) await append(`warmup_${i}`, [counted(i)]);
    const sequential = await timed(async () => {
      for (let i = 0; i < APPENDS; i++) await append(`sequential_${i}`, [counted(i)]);
    });
    const concurrent = await timed(() =>
      Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, worker) => {
          for (let i = 0; i < APPENDS / CONCURRENCY; i++)
            await append(`concurrent_${worker}_${i}`, [counted(i)]);
        }),
      ),
    );
    const batched = await timed(async () => {
      for (let i = 0; i < APPENDS / BATCH; i++) {
        await append(
          `batched_${i}`,
          Array.from({ length: BATCH }, (_, n) => counted(n)),
        );
      }
    });
    // A command on one growing stream reads the whole stream first: measured on streams of 1 to 200 events.
    const commands = await timed(async () => {
      for (let i = 0; i < 200; i++) {
        await handleCommand({
          store,
          decider: counter,
          streamId: 'one_stream',
          streamType: 'counter',
          command: {
            type: 'Count',
            data: { n: i },
            metadata: { now: Date.now(), actor: { kind: 'system', id: 'bench' } },
          },
        });
      }
    });

    const total = 200 + APPENDS * 3 + 200;
    let published = 0;
    let drained!: () => void;
    const allPublished = new Promise<void>((resolve) => (drained = resolve));
    const log = discardingLog((count) => {
      published += count;
      if (published >= total) drained();
    });
    const relayMs = await timed(async () => {
      const relay = startOutboxRelay({
        db,
        schema,
        log,
        name: 'bench',
        encode: (event) => ({
          value: new TextEncoder().encode(JSON.stringify(event.data)),
          contentType: 'application/json',
        }),
        batchSize: 500,
        logger: createLogger({ service: 'bench', level: 'silent' }),
      });
      await allPublished;
      await relay.stop();
    });

    return {
      'sequential appends, 1 event (events/s)': perSecond(APPENDS, sequential),
      [`${CONCURRENCY} concurrent appenders, 1 event each (events/s)`]: perSecond(APPENDS, concurrent),
      [`sequential appends of ${BATCH} events (events/s)`]: perSecond(APPENDS, batched),
      'handleCommand on one stream of up to 200 events (commands/s)': perSecond(200, commands),
      'relay drain to an acknowledging log, batches of 500 (events/s)': perSecond(total, relayMs),
    };
  } finally {
    await dropSchema(db, schema);
  }
};

const postgres = createPostgresDatabase({ url: TEST_DATABASE_URL, applicationName: 'eventsourcing-bench' });
const pglite = await createEmbeddedDatabase();
try {
  const [onPostgres, onPglite] = [await measure(postgres), await measure(pglite)];
  console.table(
    Object.fromEntries(
      Object.keys(onPostgres).map((measured) => [
        measured,
        { postgres: onPostgres[measured], pglite: onPglite[measured] },
      ]),
    ),
  );
} finally {
  await postgres.close();
  await pglite.close();
}
