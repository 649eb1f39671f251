import { describe, expect, it } from '@jest/globals';
import type { ForegroundLatencies, WrittenListing } from '../src/contexts/listings/imports/import.ports.js';
import type { ImportPacing } from '../src/contexts/listings/imports/pace-import.js';
import { paceImport } from '../src/contexts/listings/imports/pace-import.js';

/** Keeps the event loop busy in slices of `sliceMs` (as PGlite statements and consumer batches do) until stopped. */
const blockInSlices = (sliceMs: number): (() => void) => {
  const timer = setInterval(() => {
    const until = performance.now() + sliceMs;
    while (performance.now() < until);
  }, 1);
  return () => clearInterval(timer);
};

const WRITTEN: WrittenListing = { sellerAccountId: 7, productId: 'product_9', version: 3 };
const catalogHasAll = async (): Promise<boolean> => true;
const pacing = (overrides: Partial<ImportPacing> = {}): ImportPacing => ({
  windowMs: 20,
  maxDelayMs: 40,
  catalogRetryMs: 10,
  baseMaxAgeMs: 30_000,
  limits: {
    minRows: 10,
    maxRows: 400,
    startRows: 10,
    stepRows: 10,
    excessFactor: 1.5,
    restShare: 0.5,
    maxRestMs: 2_000,
  },
  ...overrides,
});
const elapsedMs = async (work: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Foreground requests as the gateway recorded them: `latencyMs` each, whenever asked. */
const foregroundOf = (latencyMs: { during: number; atRest: number } | undefined) => {
  const asked: { overlapping: [number, number][]; within: [number, number][] } = {
    overlapping: [],
    within: [],
  };
  const latencies: ForegroundLatencies = {
    overlapping: (from, to) => {
      asked.overlapping.push([from, to]);
      return latencyMs === undefined ? [] : [latencyMs.during, latencyMs.during];
    },
    within: (from, to) => {
      asked.within.push([from, to]);
      return latencyMs === undefined ? [] : [latencyMs.atRest];
    },
  };
  return { latencies, asked };
};

describe('pacing an import (paceImport)', () => {
  it('starts with a small chunk at once', async () => {
    const pace = paceImport(catalogHasAll, foregroundOf({ during: 5, atRest: 5 }).latencies, pacing());
    let rows = 0;
    expect(await elapsedMs(async () => (rows = await pace.first()))).toBeLessThan(100);
    expect(rows).toBe(10);
  });

  it('waits until the catalog has the last listing of the chunk (one call), then rests its share of the chunk and grows it', async () => {
    const asked: { listing: WrittenListing; timeoutMs: number }[] = [];
    const foreground = foregroundOf({ during: 6, atRest: 5 });
    const pace = paceImport(
      async (listing, timeoutMs) => {
        asked.push({ listing, timeoutMs });
        // The catalog answers when it has applied the listing: 300 ms after the chunk's call answered.
        await wait(300);
        return true;
      },
      foreground.latencies,
      pacing(),
    );
    await pace.first();
    // The chunk's call takes 300 ms.
    await wait(300);
    let rows = 0;
    const paused = await elapsedMs(async () => (rows = await pace.next(WRITTEN)));
    // 300 ms until the catalog has it, then half of the chunk's 600 ms.
    expect(paused).toBeGreaterThanOrEqual(580);
    expect(paused).toBeLessThan(1_500);
    expect(rows).toBe(20);
    // One wait per chunk, bounded by the pace's own limit, not a poll.
    expect(asked).toHaveLength(1);
    expect(asked[0]!.listing).toBe(WRITTEN);
    expect(asked[0]!.timeoutMs).toBeGreaterThan(4_900);
    expect(asked[0]!.timeoutMs).toBeLessThanOrEqual(5_000);
    // The chunk's window runs from its start until the catalog had it; the base is learned at rest after it.
    const [window] = foreground.asked.overlapping;
    expect(window![1] - window![0]).toBeGreaterThanOrEqual(580);
    const rest = foreground.asked.within.at(-1)!;
    expect(rest[0]).toBeCloseTo(window![1], 5);
    expect(rest[1] - rest[0]).toBeGreaterThanOrEqual(290);
  });

  it('asks a catalog that failed to answer again a little later, within the same bound, and goes on once it has', async () => {
    const asked: number[] = [];
    const pace = paceImport(
      async (_listing, timeoutMs) => {
        asked.push(timeoutMs);
        if (asked.length < 3) throw new Error('catalog unavailable');
        return true;
      },
      foregroundOf(undefined).latencies,
      pacing(),
    );
    await pace.first();
    const paused = await elapsedMs(() => pace.next(WRITTEN));
    expect(asked).toHaveLength(3);
    // Each later ask has what is left of the bound.
    expect(asked[2]!).toBeLessThan(asked[0]!);
    expect(paused).toBeGreaterThanOrEqual(18);
    expect(paused).toBeLessThan(1_000);
  });

  it('halves the chunk when the foreground slowed during it', async () => {
    const pace = paceImport(catalogHasAll, foregroundOf({ during: 30, atRest: 5 }).latencies, pacing());
    await pace.first();
    await wait(50);
    expect(await pace.next(WRITTEN)).toBe(10);
  });

  it('goes on at full size and without rest when no foreground request comes', async () => {
    const pace = paceImport(catalogHasAll, foregroundOf(undefined).latencies, pacing());
    await pace.first();
    await wait(400);
    let rows = 0;
    expect(await elapsedMs(async () => (rows = await pace.next(WRITTEN)))).toBeLessThan(100);
    expect(rows).toBe(400);
  });

  it('forgets requests served longer ago than baseMaxAgeMs: with none since, full size and no rest', async () => {
    const longAgo = performance.now();
    // One request at rest, served before the import began; none during its chunks.
    const foreground: ForegroundLatencies = {
      overlapping: () => [],
      within: (from) => (from <= longAgo ? [5] : []),
    };
    const pace = paceImport(catalogHasAll, foreground, pacing({ baseMaxAgeMs: 200 }));
    await wait(50);
    await pace.first();
    await wait(50);
    // Still remembered: the chunk grows (slow start) and the worker rests.
    expect(await pace.next(WRITTEN)).toBe(20);
    await wait(250);
    expect(await pace.next(WRITTEN)).toBe(400);
  });

  it('rests longer while the event loop is held, at most as long as the chunk took', async () => {
    const pace = paceImport(
      catalogHasAll,
      foregroundOf({ during: 5, atRest: 5 }).latencies,
      pacing({ maxDelayMs: 5 }),
    );
    await pace.first();
    // The "chunk": 600 ms of work after the first pause; its plan rests 300 ms, the held loop stretches it.
    await wait(600);
    const stop = blockInSlices(40);
    try {
      const paused = await elapsedMs(() => pace.next(WRITTEN));
      expect(paused).toBeGreaterThanOrEqual(550);
      expect(paused).toBeLessThan(1_500);
    } finally {
      stop();
    }
    // Once the loop is free again and the chunk was short, the next pause is about half of it.
    expect(await elapsedMs(() => pace.next(WRITTEN))).toBeLessThan(500);
  });
});
