import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEmbeddedDatabase, type Database } from '../src/index.js';
import {
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  contractTestEngines,
  eventLoopGapsDuring,
} from '../src/testing/index.js';
import { describeDatabaseContract, latch } from './database.contract.js';

// The preset's testTimeout does not apply when jest runs all projects from the root.
jest.setTimeout(30_000);

describeDatabaseContract(contractTestEngines().find((engine) => engine.name === 'pglite')!);

describe('the embedded adapter with a data directory', () => {
  let parent: string;

  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'pglite-'));
  });

  afterAll(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  it(
    'creates the directory, keeps data across close and reopen, and queues transactions',
    async () => {
      const dataDir = join(parent, 'nested', 'data');
      const first = await createEmbeddedDatabase({ dataDir });
      expect((await stat(dataDir)).isDirectory()).toBe(true);
      await first.query('create table kept (id int primary key, note text)');
      await first.query('insert into kept values ($1, $2)', [1, 'survives']);

      // One backend session: a second transaction starts only after the first ends, never in between.
      const steps: string[] = [];
      const firstStarted = latch();
      const slow = first.transaction(async (tx) => {
        steps.push('slow begins');
        firstStarted.open();
        await sleep(100);
        await tx.query('insert into kept values (2, $1)', ['from slow']);
        steps.push('slow ends');
      });
      await firstStarted.promise;
      const quick = first.transaction(async (tx) => {
        steps.push('quick begins');
        await tx.query('insert into kept values (3, $1)', ['from quick']);
        steps.push('quick ends');
      });
      await Promise.all([slow, quick]);
      expect(steps).toEqual(['slow begins', 'slow ends', 'quick begins', 'quick ends']);

      const leaderStarted = latch();
      const leader = first.withAdvisoryLock('relay', async (lockLost) => {
        leaderStarted.open();
        await new Promise((resolve) => lockLost.addEventListener('abort', resolve));
        return 'stopped';
      });
      await leaderStarted.promise;
      await first.close();
      expect(await leader).toBe('stopped');

      const reopened = await createEmbeddedDatabase({ dataDir });
      try {
        const { rows } = await reopened.query('select id, note from kept order by id');
        expect(rows).toEqual([
          { id: 1, note: 'survives' },
          { id: 2, note: 'from slow' },
          { id: 3, note: 'from quick' },
        ]);
      } finally {
        await reopened.close();
      }
      // Two engines are created here: a new data directory, then its reopening.
    },
    2 * TEST_ENGINE_CREATE_TIMEOUT_MS,
  );
});

describe('the embedded adapter and the event loop', () => {
  let db: Database;

  beforeAll(async () => {
    db = await createEmbeddedDatabase();
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  afterAll(async () => {
    await db.close();
  });

  it('keeps the event loop running while a long statement runs', async () => {
    // PGlite executes a statement synchronously (pg_sleep does not hold its thread, counting does): on this
    // thread, the timer (like an HTTP request) waited for all of it.
    const { tookMs, longestGapMs } = await eventLoopGapsDuring(() =>
      db.query('select count(*) from generate_series(1, 3000000) as n where n % 7 = 3'),
    );
    expect(tookMs).toBeGreaterThan(100);
    // Half of it leaves room for a loaded machine descheduling us.
    expect(longestGapMs).toBeLessThan(tookMs / 2);
  });

  it('keeps the event loop running while callers keep queries queued', async () => {
    await db.query('create table queued (id int primary key, payload text)');
    // 300 writers at once, as a bulk import and catching-up projections queue them.
    let timerFiredAt: number | undefined;
    const started = performance.now();
    setTimeout(() => (timerFiredAt = performance.now()), 1);
    const { tookMs, longestGapMs } = await eventLoopGapsDuring(() =>
      Promise.all(
        Array.from({ length: 300 }, (_, n) =>
          db.transaction(async (tx) => {
            await tx.query('insert into queued values ($1, $2)', [n, 'x'.repeat(200)]);
            await tx.query('select payload from queued where id = $1', [n]);
          }),
        ),
      ),
    );
    expect(timerFiredAt).toBeDefined();
    // The timer ran while the queue was still being worked through, well before its end.
    expect(timerFiredAt! - started).toBeLessThan(tookMs / 2);
    expect(longestGapMs).toBeLessThan(Math.max(250, tookMs / 2));
  });
});
