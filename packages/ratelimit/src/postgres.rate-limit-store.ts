import type { Database, Migration } from '@marketplace/database';
import { migrate, quoteIdent } from '@marketplace/database';
import type { RateLimitStore } from './ratelimit.port.js';
import { checkWindow, windowStartOf } from './ratelimit.port.js';

/**
 * One row per key. UNLOGGED: counters are worth nothing after a crash (the worst case is a fresh allowance), so
 * they skip the write-ahead log, which is most of an update's cost.
 */
export const rateLimitMigrations: readonly Migration[] = [
  {
    id: 'ratelimit-001-counters',
    sql: (schema) => `
      CREATE UNLOGGED TABLE ${schema}.rate_limit_counters (
        key text PRIMARY KEY,
        window_start bigint NOT NULL,
        window_end bigint NOT NULL,
        count integer NOT NULL
      );
      CREATE INDEX rate_limit_counters_window_end ON ${schema}.rate_limit_counters (window_end);
    `,
  },
];

/** Rows whose window ended are deleted this often (by every replica; the deletes are idempotent). */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Counters in PostgreSQL, shared by every gateway replica: one statement per request whatever the number of
 * keys (an upsert of all of them). Concurrent hits on one key serialize on its row, so counts are exact.
 */
export const createPostgresRateLimitStore = async (options: {
  readonly db: Database;
  /** Default `ratelimit`. */
  readonly schema?: string;
  readonly clock?: () => number;
}): Promise<RateLimitStore> => {
  const { db } = options;
  const schema = options.schema ?? 'ratelimit';
  await migrate(db, schema, rateLimitMigrations);
  const table = `${quoteIdent(schema)}.rate_limit_counters`;
  const now = options.clock ?? Date.now;
  const upsert = `
    INSERT INTO ${table} AS c (key, window_start, window_end, count)
    SELECT key, window_start, window_end, 1
      FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS hit(key, window_start, window_end)
    ON CONFLICT (key) DO UPDATE
      SET count = CASE WHEN c.window_start = EXCLUDED.window_start AND c.window_end = EXCLUDED.window_end
                       THEN c.count + 1 ELSE 1 END,
          window_start = EXCLUDED.window_start,
          window_end = EXCLUDED.window_end
    RETURNING key, count, window_end`;
  let sweeping: Promise<unknown> | undefined;
  const sweep = setInterval(() => {
    sweeping ??= db
      .query(`DELETE FROM ${table} WHERE window_end <= $1`, [now()])
      .catch(() => undefined)
      .finally(() => {
        sweeping = undefined;
      });
  }, SWEEP_INTERVAL_MS);
  sweep.unref();
  return {
    hit: async (hits, at) => {
      if (hits.length === 0) return [];
      const keys: string[] = [];
      const starts: number[] = [];
      const ends: number[] = [];
      for (const { key, windowMs } of hits) {
        checkWindow(windowMs);
        if (keys.includes(key)) throw new RangeError(`rate-limit key ${key} is hit twice in one call`);
        const start = windowStartOf(at, windowMs);
        keys.push(key);
        starts.push(start);
        ends.push(start + windowMs);
      }
      const { rows } = await db.query<{ key: string; count: number; window_end: string | number }>(upsert, [
        keys,
        starts,
        ends,
      ]);
      const byKey = new Map(rows.map((row) => [row.key, row]));
      return keys.map((key) => {
        const row = byKey.get(key);
        if (row === undefined) throw new Error(`rate-limit upsert returned no row for ${key}`);
        return { count: Number(row.count), resetAt: Number(row.window_end) };
      });
    },
    close: async () => {
      clearInterval(sweep);
      await sweeping;
    },
  };
};
