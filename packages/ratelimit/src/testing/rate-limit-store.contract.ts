import { expect, it } from '@jest/globals';
import type { RateLimitStore } from '../ratelimit.port.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** A time inside a sub-window, not on its edge: 10:15 UTC. */
const T = Date.UTC(2026, 8, 1, 10, 15, 0);
/** The end of T's sub-window (11:00), where the next one starts. */
const NEXT = Date.UTC(2026, 8, 1, 11, 0, 0);
const LIMIT = 10;

/**
 * The behaviour every RateLimitStore adapter has: sliding-window counts (ratelimit.port.ts). `open` gives a store
 * over fresh state each time; the suite closes what it opens.
 */
export const rateLimitStoreContract = (open: () => Promise<RateLimitStore>): void => {
  const using = async (run: (store: RateLimitStore) => Promise<void>): Promise<void> => {
    const store = await open();
    try {
      await run(store);
    } finally {
      await store.close();
    }
  };
  const hitOnce = (store: RateLimitStore, key: string, at: number, limit = LIMIT) =>
    store.hit([{ key, windowMs: HOUR, limit }], at).then(([count]) => count!);

  it('counts hits per key; within the limit, the allowance is whole again when they have all left', async () => {
    await using(async (store) => {
      expect(await hitOnce(store, 'a', T)).toEqual({ count: 1, resetAt: NEXT + HOUR });
      expect(await hitOnce(store, 'a', T + 1_000)).toEqual({ count: 2, resetAt: NEXT + HOUR });
      expect(await hitOnce(store, 'b', T + 2_000)).toEqual({ count: 1, resetAt: NEXT + HOUR });
    });
  });

  it('refuses a burst across a window boundary: the previous hits count by their overlap', async () => {
    await using(async (store) => {
      for (let n = 1; n <= LIMIT; n++) expect((await hitOnce(store, 'a', NEXT - 1_000)).count).toBe(n);
      // Fixed windows would allow ten more at 11:00; the sliding window still holds the ten.
      const atBoundary = await hitOnce(store, 'a', NEXT);
      expect(atBoundary.count).toBe(LIMIT + 1);
      // One hit in this sub-window leaves room for the previous ten at 9/10 of their weight: after 6 min.
      expect(atBoundary.resetAt).toBe(NEXT + 6 * MINUTE + 1);
      // A quarter of the way in, three quarters of the previous ten still count: 2 + floor(7.5).
      expect((await hitOnce(store, 'a', NEXT + 15 * MINUTE)).count).toBe(2 + 7);
    });
  });

  it('says when a key over its limit by itself may hit again', async () => {
    await using(async (store) => {
      for (let n = 1; n < 2 * LIMIT; n++) await hitOnce(store, 'a', T);
      // 20 hits fade out during the next sub-window: below 10 after half of it.
      expect(await hitOnce(store, 'a', T)).toEqual({ count: 2 * LIMIT, resetAt: NEXT + 30 * MINUTE + 1 });
    });
  });

  it('starts again from one once the window has slid past every hit', async () => {
    await using(async (store) => {
      await hitOnce(store, 'a', T);
      await hitOnce(store, 'a', T);
      expect((await hitOnce(store, 'a', T + 2 * HOUR)).count).toBe(1);
    });
  });

  it('counts several keys in one call, in order, each with its own window', async () => {
    await using(async (store) => {
      await hitOnce(store, 'ip', T);
      expect(
        await store.hit(
          [
            { key: 'ip', windowMs: HOUR, limit: LIMIT },
            { key: 'email', windowMs: MINUTE, limit: LIMIT },
          ],
          T,
        ),
      ).toEqual([
        { count: 2, resetAt: NEXT + HOUR },
        { count: 1, resetAt: T + 2 * MINUTE },
      ]);
    });
  });

  it('loses no hit under 50 concurrent callers', async () => {
    await using(async (store) => {
      const counts = await Promise.all(Array.from({ length: 50 }, () => hitOnce(store, 'hot', T, 1_000)));
      expect(counts.map(({ count }) => count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 50 }, (_, n) => n + 1),
      );
      expect((await hitOnce(store, 'hot', T, 1_000)).count).toBe(51);
    });
  });

  it('refuses a window that is not a positive whole number of ms', async () => {
    await using(async (store) => {
      await expect(store.hit([{ key: 'a', windowMs: 0, limit: LIMIT }], T)).rejects.toThrow(RangeError);
    });
  });
};
