import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  testEngines,
} from '@marketplace/database/testing';
import { createPostgresRateLimitStore } from '../src/index.js';

const HOUR = 3_600_000;
const T = Date.UTC(2026, 8, 1, 10, 15, 0);
const SYNC_MS = 50;

/** The PostgreSQL store's own promises: counts shared by replicas, and no statement per request. */
describe.each(testEngines())('PostgreSQL rate-limit store across replicas on $name', ({ create }) => {
  let db: Database;
  let statements = 0;
  /** The same database, counting the statements the store sends (migrations included). */
  let counted: Database;
  const schemas: string[] = [];
  const freshSchema = () => {
    const schema = freshSchemaName('ratelimit_replicas_test');
    schemas.push(schema);
    return schema;
  };

  beforeAll(async () => {
    db = await create();
    counted = new Proxy(db, {
      get: (target, property, receiver) => {
        if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
        return (...args: Parameters<Database['query']>) => {
          statements += 1;
          return target.query(...args);
        };
      },
    });
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(db, schema);
    await db.close();
  });

  it('adds up the hits of two replicas in one table', async () => {
    const schema = freshSchema();
    const first = await createPostgresRateLimitStore({ db, schema, syncIntervalMs: SYNC_MS });
    const second = await createPostgresRateLimitStore({ db, schema, syncIntervalMs: SYNC_MS });
    const hit = (store: typeof first) =>
      store.hit([{ key: 'catalog.ip:203.0.113.9', windowMs: HOUR, limit: 100 }], T).then(([n]) => n!.count);
    try {
      for (let n = 1; n <= 3; n++) expect(await hit(first)).toBe(n);
      // The second replica's first hit reads the table: the first replica's are there, or on their way.
      expect(await hit(second)).toBeGreaterThanOrEqual(2);
      expect(await hit(second)).toBeGreaterThanOrEqual(3);
    } finally {
      // Closing writes what a replica has counted and not yet sent.
      await second.close();
    }
    try {
      // Past the freshness of its view, a hit reads the table: every hit of both replicas is in it.
      await sleep(3 * SYNC_MS);
      expect(await hit(first)).toBe(6);
    } finally {
      await first.close();
    }
  });

  it('stays exact on one replica while hits, flushes and round trips interleave', async () => {
    const schema = freshSchema();
    const store = await createPostgresRateLimitStore({ db, schema, syncIntervalMs: 5 });
    const hit = () => store.hit([{ key: 'busy', windowMs: HOUR, limit: 400 }], T).then(([n]) => n!.count);
    const counts: number[] = [];
    try {
      // Ten callers at once, 30 hits each: local counts, flushes every 5 ms and, above 200, one statement each.
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let n = 0; n < 30; n++) counts.push(await hit());
        }),
      );
    } finally {
      await store.close();
    }
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, n) => n + 1));
    // Everything counted reached the table: a fresh replica's first hit reads 301.
    const fresh = await createPostgresRateLimitStore({ db, schema });
    try {
      expect((await fresh.hit([{ key: 'busy', windowMs: HOUR, limit: 400 }], T))[0]!.count).toBe(301);
    } finally {
      await fresh.close();
    }
  });

  it('answers a hot key without a statement per request, below half its limit and above it', async () => {
    const before = statements;
    const hot = await createPostgresRateLimitStore({
      db: counted,
      schema: freshSchema(),
      syncIntervalMs: 10_000,
    });
    try {
      const migrations = statements - before;
      const hit = (key: string, limit: number) =>
        hot.hit([{ key, windowMs: HOUR, limit }], T).then(([n]) => n!.count);
      // Limit 1,000: the first hit reads the table, the next 199 are counted here (the flush is 10 s away).
      const counts: number[] = [];
      for (let n = 0; n < 200; n++) counts.push(await hit('hot', 1_000));
      expect(counts).toEqual(Array.from({ length: 200 }, (_, n) => n + 1));
      expect(statements - before - migrations).toBe(1);
      // Limit 10 on another key: hits 6 to 10 go to the table one by one (exact near the limit); the refusals
      // after them are answered here, however many an attacker sends.
      const floodStart = statements;
      const flood: number[] = [];
      for (let n = 0; n < 100; n++) flood.push(await hit('flood', 10));
      expect(flood).toEqual(Array.from({ length: 100 }, (_, n) => n + 1));
      expect(statements - floodStart).toBe(1 + 5);
    } finally {
      await hot.close();
    }
  });
});
