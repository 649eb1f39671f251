import { describe, expect, it } from '@jest/globals';
import { paceByEventLoopDelay } from '../src/contexts/listings/imports/pace-import.js';

/** Keeps the event loop busy in slices of `sliceMs` (as PGlite statements and consumer batches do) until stopped. */
const blockInSlices = (sliceMs: number): (() => void) => {
  const timer = setInterval(() => {
    const until = performance.now() + sliceMs;
    while (performance.now() < until);
  }, 1);
  return () => clearInterval(timer);
};

describe('pacing an import by the event loop (paceByEventLoopDelay)', () => {
  it('goes on after one window when the event loop answers at once', async () => {
    const pace = paceByEventLoopDelay({ windowMs: 50, maxDelayMs: 40 });
    const started = performance.now();
    await pace();
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('waits while the loop is held, at most as long as the chunk before took, then lets the next chunk go', async () => {
    const pace = paceByEventLoopDelay({ windowMs: 50, maxDelayMs: 5 });
    await pace();
    // The "chunk": 600 ms of work after the first pause.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const stop = blockInSlices(40);
    try {
      const started = performance.now();
      await pace();
      const paused = performance.now() - started;
      expect(paused).toBeGreaterThanOrEqual(550);
      expect(paused).toBeLessThan(1_500);
    } finally {
      stop();
    }
    // Once the loop is free again, the next pause is one window.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await pace();
    expect(performance.now() - started).toBeLessThan(500);
  });
});
