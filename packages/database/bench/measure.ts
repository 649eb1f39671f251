/**
 * Measures what the README reports: PGlite's start-up (create, first create of a data directory, reopen) and
 * simple-query throughput on both adapters. Run after a build: `node packages/database/dist/bench/measure.js`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEmbeddedDatabase,
  createPostgresDatabase,
  waitForDatabase,
  type Database,
} from '../src/index.js';
import { TEST_DATABASE_URL, freshSchemaName } from '../src/testing/index.js';

const QUERIES = 2_000;
const CONCURRENCY = 8;

const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const startedAt = performance.now();
  const result = await work();
  return [result, performance.now() - startedAt];
};

const perSecond = (count: number, ms: number): string =>
  Math.round((count / ms) * 1_000).toLocaleString('en');

const throughput = async (db: Database): Promise<Record<string, string>> => {
  for (let i = 0; i < 200; i++) await db.query('select $1::int4 as n', [i]);
  const [, sequential] = await timed(async () => {
    for (let i = 0; i < QUERIES; i++) await db.query('select $1::int4 as n', [i]);
  });
  const [, parameterless] = await timed(async () => {
    for (let i = 0; i < QUERIES; i++) await db.query('select 1 as n');
  });
  const [, concurrent] = await timed(() =>
    Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        for (let i = 0; i < QUERIES / CONCURRENCY; i++) await db.query('select $1::int4 as n', [worker + i]);
      }),
    ),
  );
  const [, transactions] = await timed(async () => {
    for (let i = 0; i < QUERIES / 4; i++) {
      await db.transaction(async (tx) => {
        await tx.query('select $1::int4 as n', [i]);
      });
    }
  });
  const table = freshSchemaName('measure');
  await db.query(`create table ${table} (id int primary key, note text not null)`);
  const [, inserts] = await timed(async () => {
    for (let i = 0; i < QUERIES / 4; i++) {
      await db.transaction(async (tx) => {
        await tx.query(`insert into ${table} (id, note) values ($1, $2)`, [i, 'measured']);
      });
    }
  });
  await db.query(`drop table ${table}`);
  return {
    'select $1, sequential (q/s)': perSecond(QUERIES, sequential),
    'select 1 without parameters, sequential (q/s)': perSecond(QUERIES, parameterless),
    [`select $1, ${CONCURRENCY} concurrent callers (q/s)`]: perSecond(QUERIES, concurrent),
    'transaction with one select, sequential (tx/s)': perSecond(QUERIES / 4, transactions),
    'transaction with one insert, sequential (tx/s)': perSecond(QUERIES / 4, inserts),
  };
};

const main = async (): Promise<void> => {
  const parent = await mkdtemp(join(tmpdir(), 'pglite-measure-'));
  try {
    const [memory, firstCreate] = await timed(() => createEmbeddedDatabase());
    const pgliteRates = await throughput(memory);
    await memory.close();
    const [secondMemory, secondCreate] = await timed(() => createEmbeddedDatabase());
    await secondMemory.close();

    const dataDir = join(parent, 'data');
    const [durable, initDataDir] = await timed(() => createEmbeddedDatabase({ dataDir }));
    const durableRates = await throughput(durable);
    await durable.close();
    const [reopened, reopen] = await timed(() => createEmbeddedDatabase({ dataDir }));
    await reopened.close();

    const postgres = createPostgresDatabase({ url: TEST_DATABASE_URL, poolSize: CONCURRENCY });
    await waitForDatabase(postgres, { timeoutMs: 10_000 });
    const postgresRates = await throughput(postgres);
    await postgres.close();

    const ms = (value: number): string => `${Math.round(value)} ms`;
    const lines = [
      '| PGlite start-up | time |',
      '|---|---|',
      `| in memory, first in the process (compiles the WASM) | ${ms(firstCreate)} |`,
      `| in memory, second in the process | ${ms(secondCreate)} |`,
      `| new data directory (initdb) | ${ms(initDataDir)} |`,
      `| reopen a data directory | ${ms(reopen)} |`,
      '',
      '| throughput | PGlite in memory | PGlite data directory | PostgreSQL 15 (loopback) |',
      '|---|---|---|---|',
      ...Object.keys(pgliteRates).map(
        (name) => `| ${name} | ${pgliteRates[name]} | ${durableRates[name]} | ${postgresRates[name]} |`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
};

await main();
