/**
 * Measures publish and consume throughput of the NATS and embedded adapters on this machine:
 *   npx tsc -b packages/eventlog && node packages/eventlog/dist/bench/throughput.js
 * Needs NATS at NATS_URL (default nats://127.0.0.1:4222) and PostgreSQL at DATABASE_URL (default the local
 * trust-auth server). Prints a markdown table for the README.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { createEmbeddedDatabase, createPostgresDatabase, type Database } from '@marketplace/database';
import {
  createEmbeddedEventLog,
  createNatsEventLog,
  streamNameOf,
  type EventLog,
  type LogMessage,
} from '../src/index.js';

const natsUrl = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const databaseUrl = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const total = Number(process.env['BENCH_MESSAGES'] ?? 10_000);
const batchSize = 100;
const singles = 1_000;
const value = new Uint8Array(300).fill(7); // about one protobuf event

const message = (i: number): LogMessage => ({
  key: `listing-${i % 1_000}`,
  value,
  headers: { ce_id: randomUUID(), ce_type: 'marketplace.listing.published.v1', ce_source: '//bench' },
});

const perSecond = (count: number, ms: number): string =>
  `${Math.round((count / ms) * 1_000).toLocaleString('en')}/s`;

const consumeAll = async (log: EventLog, topic: string, count: number): Promise<number> => {
  let handled = 0;
  const started = performance.now();
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const subscription = await log.consume({
    topic,
    group: 'bench',
    handler: async (batch) => {
      handled += batch.messages.length;
      if (handled >= count) finished();
    },
  });
  await done;
  const elapsed = performance.now() - started;
  await subscription.close();
  return elapsed;
};

const measure = async (name: string, log: EventLog): Promise<string> => {
  const batched = `bench.t${randomUUID().slice(0, 8)}.v1`;
  const messages = Array.from({ length: total }, (_, i) => message(i));
  let started = performance.now();
  for (let i = 0; i < total; i += batchSize) await log.publish(batched, messages.slice(i, i + batchSize));
  const publishBatchedMs = performance.now() - started;

  const single = `bench.t${randomUUID().slice(0, 8)}.v1`;
  started = performance.now();
  for (let i = 0; i < singles; i++) await log.publish(single, [message(i)]);
  const publishSingleMs = performance.now() - started;

  const consumeMs = await consumeAll(log, batched, total);
  await log.close();
  return `| ${name} | ${perSecond(total, publishBatchedMs)} | ${perSecond(singles, publishSingleMs)} | ${perSecond(total, consumeMs)} |`;
};

const withDatabase = async (db: Database, name: string, schema: string): Promise<string> => {
  try {
    return await measure(name, await createEmbeddedEventLog({ db, schema }));
  } finally {
    await db.query(`drop schema if exists ${schema} cascade`);
    await db.close();
  }
};

const main = async (): Promise<void> => {
  const rows: string[] = [];

  const nats = await createNatsEventLog({ servers: natsUrl });
  rows.push(await measure('NATS JetStream (file storage, 1 server)', nats));

  const dataDir = await mkdtemp(join(tmpdir(), 'eventlog-bench-'));
  try {
    rows.push(
      await withDatabase(
        await createEmbeddedDatabase({ dataDir }),
        'embedded on PGlite (data directory)',
        'eventlog_bench',
      ),
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  rows.push(
    await withDatabase(
      createPostgresDatabase({ url: databaseUrl }),
      'embedded on PostgreSQL 15',
      `eventlog_bench_${process.pid}`,
    ),
  );

  // The bench topics' streams are not worth keeping.
  const admin = await connect({ servers: natsUrl });
  const jsm = await jetstreamManager(admin);
  for await (const stream of jsm.streams.list()) {
    if (stream.config.name.startsWith(streamNameOf('bench.t'))) await jsm.streams.delete(stream.config.name);
  }
  await admin.close();

  console.log(
    `${total.toLocaleString('en')} messages of ${value.length} bytes over 1,000 keys, 8 partitions, one consumer:`,
  );
  console.log('| adapter | publish, batches of 100 | publish, one at a time | consume (one member) |');
  console.log('|---|---|---|---|');
  for (const row of rows) console.log(row);
};

await main();
