import type { Database, Migration } from '@marketplace/database';
import { migrate, quoteIdent } from '@marketplace/database';
import type { SubWindowCounter } from './memory.rate-limit-store.js';
import { hasFadedOut } from './memory.rate-limit-store.js';
import type { RateLimitCount, RateLimitHit, RateLimitStore } from './ratelimit.port.js';
import { checkWindow, slidingCountOf, windowStartOf } from './ratelimit.port.js';

/**
 * One row per (key, sub-window). UNLOGGED: counters are worth nothing after a crash (the worst case is a fresh
 * allowance), so they skip the write-ahead log, which is most of an update's cost.
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
  {
    id: 'ratelimit-002-sub-windows',
    sql: (schema) => `
      DROP TABLE ${schema}.rate_limit_counters;
      CREATE UNLOGGED TABLE ${schema}.rate_limit_windows (
        key text NOT NULL,
        window_start bigint NOT NULL,
        -- When the sub-window's hits have left every sliding window: window_start + 2 * window.
        expires_at bigint NOT NULL,
        count integer NOT NULL,
        PRIMARY KEY (key, window_start)
      );
      CREATE INDEX rate_limit_windows_expires_at ON ${schema}.rate_limit_windows (expires_at);
    `,
  },
];

/** Rows and local counters with no hit left in any window are dropped this often. */
const SWEEP_INTERVAL_MS = 60_000;

/** Default of `syncIntervalMs`. */
export const DEFAULT_RATE_LIMIT_SYNC_INTERVAL_MS = 100;

/** A key as this replica sees it: the table's counts at the last sync, plus its own hits not yet in them. */
interface SharedCounter extends SubWindowCounter {
  /** Hits taken here in `windowStart`'s sub-window and not yet sent to the table. */
  pending: number;
  /** `performance.now()` of the last read of the table's counts. */
  syncedAt: number;
  /**
   * The statement under way for this key (a flush or a round trip): hits on the key wait for it, so its count
   * moves to the table and back without a hit counted twice or missed.
   */
  syncing?: Promise<void>;
}

/** A promise and the function that settles it: what hits wait on while their key is being synced. */
const gate = (): { readonly opened: Promise<void>; readonly open: () => void } => {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
};

interface Row {
  readonly key: string;
  readonly windowStart: number;
  readonly windowMs: number;
  readonly delta: number;
}

/**
 * Counters in PostgreSQL, shared by every gateway replica, without a statement per request (issue of cost:
 * concurrent requests would otherwise serialise on one hot row per key). Each replica counts its hits in memory
 * and adds them to the table in one statement every `syncIntervalMs` (a flush also reads back the totals, which
 * include the other replicas' hits). A hit is answered from this view when it was synced within two intervals
 * and either leaves the key at most at half its limit or is over the limit already (the view is a lower bound
 * of the true count, so such a refusal is always right); otherwise, and for a key not seen lately, the hit goes
 * to the table at once (one upsert for all keys of the request), which is exact.
 *
 * How far off: a count can miss the hits other replicas took in the last three sync intervals (300 ms by
 * default), and only while it is at most half the limit, so a burst spread over R replicas within that time can
 * pass at most R × limit / 2 hits beyond the limit. One replica alone is exact.
 */
export const createPostgresRateLimitStore = async (options: {
  readonly db: Database;
  /** Default `ratelimit`. */
  readonly schema?: string;
  readonly clock?: () => number;
  /** How often local hits are written and the others' read back; default 100 ms. */
  readonly syncIntervalMs?: number;
}): Promise<RateLimitStore> => {
  const { db } = options;
  const schema = options.schema ?? 'ratelimit';
  await migrate(db, schema, rateLimitMigrations);
  const table = `${quoteIdent(schema)}.rate_limit_windows`;
  const now = options.clock ?? Date.now;
  const syncIntervalMs = options.syncIntervalMs ?? DEFAULT_RATE_LIMIT_SYNC_INTERVAL_MS;
  const counters = new Map<string, SharedCounter>();

  // Adds each row's delta and answers the sub-window's total and the one before it. The previous total is read
  // from this statement's own upsert when it is in it (a CTE's changes are not visible to the outer scan).
  const upsert = `
    WITH hit AS (
      SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[])
        AS h(key, window_start, window_ms, delta)
    ), up AS (
      INSERT INTO ${table} AS c (key, window_start, expires_at, count)
      SELECT key, window_start, window_start + 2 * window_ms, delta FROM hit ORDER BY key, window_start
      ON CONFLICT (key, window_start) DO UPDATE SET count = c.count + EXCLUDED.count
      RETURNING key, window_start, count
    )
    SELECT up.key, up.window_start, up.count AS current,
           COALESCE(before_up.count, before.count, 0) AS previous
      FROM up
      JOIN hit ON hit.key = up.key AND hit.window_start = up.window_start
      LEFT JOIN up AS before_up
        ON before_up.key = up.key AND before_up.window_start = up.window_start - hit.window_ms
      LEFT JOIN ${table} AS before
        ON before.key = up.key AND before.window_start = up.window_start - hit.window_ms`;

  const send = async (
    rows: readonly Row[],
  ): Promise<Map<string, { windowStart: number; current: number; previous: number }>> => {
    const { rows: totals } = await db.query<{
      key: string;
      window_start: string | number;
      current: number;
      previous: number;
    }>(upsert, [
      rows.map((row) => row.key),
      rows.map((row) => row.windowStart),
      rows.map((row) => row.windowMs),
      rows.map((row) => row.delta),
    ]);
    const byKey = new Map<string, { windowStart: number; current: number; previous: number }>();
    for (const total of totals) {
      const windowStart = Number(total.window_start);
      const known = byKey.get(total.key);
      // A key with two rows (a sub-window left behind, and the new one): the newer is the key's state.
      if (known === undefined || known.windowStart < windowStart) {
        byKey.set(total.key, {
          windowStart,
          current: Number(total.current),
          previous: Number(total.previous),
        });
      }
    }
    return byKey;
  };

  /** Writes every key's pending hits and takes the totals read back as the new view. */
  let flushing: Promise<void> | undefined;
  const flush = async (): Promise<void> => {
    const sent: [string, SharedCounter][] = [];
    const rows: Row[] = [];
    const { opened, open } = gate();
    for (const [key, counter] of counters) {
      if (counter.pending === 0 || counter.syncing !== undefined) continue;
      rows.push({
        key,
        windowStart: counter.windowStart,
        windowMs: counter.windowMs,
        delta: counter.pending,
      });
      sent.push([key, counter]);
      counter.pending = 0;
      counter.syncing = opened;
    }
    if (rows.length === 0) return;
    const startedAt = performance.now();
    try {
      const totals = await send(rows);
      for (const [key, counter] of sent) {
        const total = totals.get(key);
        counter.syncing = undefined;
        if (total === undefined || total.windowStart !== counter.windowStart) continue;
        // Counts only grow within a sub-window: the larger is the newer.
        counter.current = Math.max(counter.current, total.current);
        counter.previous = Math.max(counter.previous, total.previous);
        counter.syncedAt = startedAt;
      }
    } catch {
      // The hits stay unwritten for good (counters are best kept, not kept at all costs); the keys are synced
      // again on their next hit.
      for (const [key, counter] of sent) if (counters.get(key) === counter) counters.delete(key);
    } finally {
      open();
    }
  };
  const flushTimer = setInterval(() => {
    flushing ??= flush().finally(() => {
      flushing = undefined;
    });
  }, syncIntervalMs);
  flushTimer.unref();

  let sweeping: Promise<unknown> | undefined;
  const sweep = setInterval(() => {
    const at = now();
    for (const [key, counter] of counters) {
      if (hasFadedOut(counter, at) && counter.pending === 0 && counter.syncing === undefined)
        counters.delete(key);
    }
    sweeping ??= db
      .query(`DELETE FROM ${table} WHERE expires_at <= $1`, [at])
      .catch(() => undefined)
      .finally(() => {
        sweeping = undefined;
      });
  }, SWEEP_INTERVAL_MS);
  sweep.unref();

  const estimateOf = (counter: SharedCounter, hit: RateLimitHit, at: number): RateLimitCount =>
    slidingCountOf(
      {
        windowStart: counter.windowStart,
        current: counter.current + counter.pending,
        previous: counter.previous,
      },
      hit.windowMs,
      hit.limit,
      at,
    );

  /** The hit counted from this replica's view, or undefined when it must go to the table. */
  const countLocally = (hit: RateLimitHit, at: number): RateLimitCount | undefined => {
    const counter = counters.get(hit.key);
    if (
      counter === undefined ||
      counter.windowMs !== hit.windowMs ||
      counter.windowStart !== windowStartOf(at, hit.windowMs) ||
      performance.now() - counter.syncedAt > 2 * syncIntervalMs
    ) {
      return undefined;
    }
    counter.pending += 1;
    const counted = estimateOf(counter, hit, at);
    if (counted.count <= hit.limit / 2 || counted.count > hit.limit) return counted;
    counter.pending -= 1;
    return undefined;
  };

  /** One upsert for the hits that need the table; their keys' views are taken from its answer. */
  const countInTable = async (hits: readonly RateLimitHit[], at: number): Promise<RateLimitCount[]> => {
    const rows: Row[] = [];
    for (const hit of hits) {
      const windowStart = windowStartOf(at, hit.windowMs);
      const counter = counters.get(hit.key);
      let delta = 1;
      if (counter !== undefined && counter.pending > 0) {
        if (counter.windowStart === windowStart && counter.windowMs === hit.windowMs)
          delta += counter.pending;
        else
          rows.push({
            key: hit.key,
            windowStart: counter.windowStart,
            windowMs: counter.windowMs,
            delta: counter.pending,
          });
        counter.pending = 0;
      }
      rows.push({ key: hit.key, windowStart, windowMs: hit.windowMs, delta });
    }
    const startedAt = performance.now();
    const { opened, open } = gate();
    for (const hit of hits) {
      const counter = counters.get(hit.key);
      if (counter !== undefined) counter.syncing = opened;
      // A key first seen here gets a placeholder at once, so that its next hits wait for this statement too.
      else
        counters.set(hit.key, {
          windowMs: hit.windowMs,
          windowStart: windowStartOf(at, hit.windowMs),
          current: 0,
          previous: 0,
          pending: 0,
          syncedAt: Number.NEGATIVE_INFINITY,
          syncing: opened,
        });
    }
    try {
      const totals = await send(rows);
      return hits.map((hit) => {
        const total = totals.get(hit.key);
        if (total === undefined) throw new Error(`rate-limit upsert returned no row for ${hit.key}`);
        // Hits on the key waited for this statement: its totals are the whole view.
        counters.set(hit.key, {
          windowMs: hit.windowMs,
          windowStart: total.windowStart,
          current: total.current,
          previous: total.previous,
          pending: 0,
          syncedAt: startedAt,
        });
        // The answer is this hit's own total, exact whatever the order the round trips resolved in.
        return slidingCountOf(total, hit.windowMs, hit.limit, at);
      });
    } catch (error) {
      for (const hit of hits) counters.delete(hit.key);
      throw error;
    } finally {
      open();
    }
  };

  return {
    hit: async (hits, at) => {
      const keys = new Set<string>();
      for (const { key, windowMs } of hits) {
        checkWindow(windowMs);
        if (keys.has(key)) throw new RangeError(`rate-limit key ${key} is hit twice in one call`);
        keys.add(key);
      }
      // Keys being synced: wait until none is, then count without yielding until the statement is sent, so no
      // flush or round trip of these keys runs beside this one.
      for (;;) {
        const syncing = hits.map((hit) => counters.get(hit.key)?.syncing).find((wait) => wait !== undefined);
        if (syncing === undefined) break;
        await syncing;
      }
      const counted: (RateLimitCount | undefined)[] = hits.map((hit) => countLocally(hit, at));
      const toTable = hits.filter((_, index) => counted[index] === undefined);
      if (toTable.length > 0) {
        const fromTable = await countInTable(toTable, at);
        let next = 0;
        return counted.map((count) => count ?? fromTable[next++]!);
      }
      return counted as RateLimitCount[];
    },
    close: async () => {
      clearInterval(flushTimer);
      clearInterval(sweep);
      await flushing;
      await flush();
      await sweeping;
    },
  };
};
