import { describe, expect, it } from '@jest/globals';
import { drainFailure, waitForDrain } from '../src/drain.js';

/** A virtual clock that waiting advances, and a count that follows `doneAt` (done so far at each time). */
const virtual = (doneAt: (ms: number) => number) => {
  let ms = 0;
  return {
    count: async () => doneAt(ms),
    now: () => ms,
    wait: async (waitMs: number) => {
      ms += waitMs;
    },
  };
};

describe('waitForDrain', () => {
  it('waits from the load end until the count reaches what was expected', async () => {
    // 40 done at the load's end (time 0), then 10 more every 100 ms.
    const clock = virtual((ms) => 40 + Math.floor(ms / 100) * 10);
    const drain = await waitForDrain({ ...clock, expected: 100, loadEnded: 0, pollMs: 100 });
    expect(drain).toEqual({
      expected: 100,
      doneWhenLoadEnded: 40,
      done: 100,
      drainSeconds: 0.6,
      complete: true,
    });
    expect(drainFailure('emails written', drain)).toBeUndefined();
  });

  it('does not wait when everything was done at the load end', async () => {
    const clock = virtual(() => 12);
    const drain = await waitForDrain({ ...clock, expected: 10, loadEnded: 0 });
    expect(drain).toMatchObject({ doneWhenLoadEnded: 12, done: 12, drainSeconds: 0, complete: true });
  });

  it('counts the time since the load ended, not since the wait began', async () => {
    const clock = virtual((ms) => (ms >= 1_500 ? 5 : 0));
    await clock.wait(1_000);
    const drain = await waitForDrain({ ...clock, expected: 5, loadEnded: 0, pollMs: 500 });
    expect(drain.drainSeconds).toBe(1.5);
  });

  it('gives up at the timeout, and the run is recorded as failed', async () => {
    const clock = virtual((ms) => Math.min(90, Math.floor(ms / 1_000)));
    const drain = await waitForDrain({
      ...clock,
      expected: 100,
      loadEnded: 0,
      timeoutMs: 30_000,
      pollMs: 250,
    });
    expect(drain).toMatchObject({ done: 30, drainSeconds: 30, complete: false });
    expect(drainFailure('emails written', drain)).toBe(
      '30 of 100 emails written 30 s after the load: the CPU through the drain leaves the rest out',
    );
  });
});
