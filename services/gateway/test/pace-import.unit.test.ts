import { describe, expect, it } from '@jest/globals';
import type { WrittenListing } from '../src/contexts/listings/imports/import.ports.js';
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
  windowMs: 50,
  maxDelayMs: 40,
  catalogPollMs: 10,
  restShare: 0.5,
  ...overrides,
});
const elapsedMs = async (work: () => Promise<void>): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

describe('pacing an import (paceImport)', () => {
  it('goes on after one window when nothing came before and the event loop answers at once', async () => {
    const pace = paceImport(catalogHasAll, pacing());
    expect(await elapsedMs(() => pace(undefined))).toBeLessThan(500);
  });

  it('waits until the catalog has the last listing of the chunk before, then rests its share of the chunk', async () => {
    const asked: WrittenListing[] = [];
    let catalogAppliedAt = Infinity;
    const pace = paceImport(
      async (listing) => {
        asked.push(listing);
        return performance.now() >= catalogAppliedAt;
      },
      pacing({ windowMs: 20 }),
    );
    await pace(undefined);
    // The chunk's call takes 300 ms; the catalog applies its listings 300 ms after it answered.
    await new Promise((resolve) => setTimeout(resolve, 300));
    catalogAppliedAt = performance.now() + 300;
    const paused = await elapsedMs(() => pace(WRITTEN));
    // 300 ms until the catalog has it, then half of the chunk's 600 ms.
    expect(paused).toBeGreaterThanOrEqual(580);
    expect(paused).toBeLessThan(1_500);
    expect(asked.length).toBeGreaterThan(1);
    expect(asked.every((listing) => listing === WRITTEN)).toBe(true);
  });

  it('rests longer while the event loop is held, at most as long as the chunk took, then lets the next chunk go', async () => {
    const pace = paceImport(catalogHasAll, pacing({ maxDelayMs: 5, restShare: 0.1 }));
    await pace(undefined);
    // The "chunk": 600 ms of work after the first pause.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const stop = blockInSlices(40);
    try {
      const paused = await elapsedMs(() => pace(WRITTEN));
      expect(paused).toBeGreaterThanOrEqual(550);
      expect(paused).toBeLessThan(1_500);
    } finally {
      stop();
    }
    // Once the loop is free again and the chunk was short, the next pause is about one window.
    expect(await elapsedMs(() => pace(WRITTEN))).toBeLessThan(500);
  });
});
