import { randomBytes } from 'node:crypto';
import { quoteIdent, type Database } from '../database.port.js';
import { createEmbeddedDatabase } from '../pglite.adapter.js';
import { createPostgresDatabase } from '../postgres.adapter.js';
import { waitForDatabase } from '../wait-for-database.js';

/** The PostgreSQL server integration tests use: env TEST_DATABASE_URL, else the local trust-auth server. */
export const TEST_DATABASE_URL =
  process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A unique, valid lower-case identifier starting with `prefix`: a schema for one test file, or a LISTEN
 * channel. Unique across jest's parallel workers (48 random bits).
 */
export const freshSchemaName = (prefix: string): string => {
  if (!/^[a-z][a-z0-9_]{0,40}$/.test(prefix)) {
    throw new Error(`schema prefix must be a lower-case identifier of at most 41 characters: ${prefix}`);
  }
  return `${prefix}_${randomBytes(6).toString('hex')}`;
};

/** Drops a test's schema and everything in it. */
export const dropSchema = async (db: Database, schema: string): Promise<void> => {
  await db.query(`drop schema if exists ${quoteIdent(schema)} cascade`);
};

/**
 * A timeout for the `beforeAll` that calls `create()`: creating an embedded engine takes 3-10 s on a busy
 * 2-core machine, beyond jest's default of 5 s (a project's `testTimeout` does not apply when jest runs projects).
 */
export const TEST_ENGINE_CREATE_TIMEOUT_MS = 60_000;

export interface TestEngine {
  readonly name: 'postgres' | 'pglite';
  /**
   * Opens a database; the caller closes it. Call it once per test file, in a `beforeAll` given
   * TEST_ENGINE_CREATE_TIMEOUT_MS: an embedded engine takes seconds to create. PostgreSQL is waited for up to 10 s.
   */
  create(): Promise<Database>;
}

const POSTGRES: TestEngine = {
  name: 'postgres',
  async create() {
    // A small pool: jest runs many test files at once against one server.
    const db = createPostgresDatabase({
      url: TEST_DATABASE_URL,
      poolSize: 4,
      applicationName: 'marketplace-test',
    });
    try {
      await waitForDatabase(db, { timeoutMs: 10_000 });
    } catch (error) {
      await db.close();
      throw error;
    }
    return db;
  },
};
const PGLITE: TestEngine = { name: 'pglite', create: () => createEmbeddedDatabase() };

/**
 * Both engines, always: for a port's contract suite (the `Database` contract, the embedded event log, the
 * PostgreSQL rate-limit store), whose point is that every engine behaves the same.
 */
export const contractTestEngines = (): TestEngine[] => [POSTGRES, PGLITE];

/**
 * The engines an integration suite runs on, for `describe.each(testEngines())('$name', ({ create }) => ...)`:
 * PostgreSQL alone, since the SQL is the same on both and the contract suites hold PGlite to it. TEST_ENGINES
 * (comma-separated: `postgres,pglite`) chooses others, e.g. to run every suite on PGlite as well.
 */
export const testEngines = (): TestEngine[] =>
  (process.env['TEST_ENGINES'] ?? 'postgres').split(',').map((name) => {
    const engine = contractTestEngines().find((candidate) => candidate.name === name.trim());
    if (!engine) throw new Error(`TEST_ENGINES: unknown engine "${name.trim()}" (postgres, pglite)`);
    return engine;
  });

/**
 * Runs `work` while a timer ticks every `tickMs`; answers its result, how long it took and the longest wait
 * between two ticks (the wait since the last tick counts too: a timer that never fired waited for all of the
 * work). Tests of work moved off the event loop (PGlite's worker, a parser's thread) assert on the gap.
 */
export const eventLoopGapsDuring = async <T>(
  work: () => Promise<T>,
  tickMs = 1,
): Promise<{ result: T; tookMs: number; longestGapMs: number }> => {
  let longestGapMs = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
  }, tickMs);
  const started = performance.now();
  try {
    const result = await work();
    const finished = performance.now();
    return { result, tookMs: finished - started, longestGapMs: Math.max(longestGapMs, finished - last) };
  } finally {
    clearInterval(ticker);
  }
};
