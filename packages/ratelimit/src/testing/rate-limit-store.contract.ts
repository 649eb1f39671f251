import { expect, it } from '@jest/globals';
import type { RateLimitStore } from '../ratelimit.port.js';

const HOUR = 3_600_000;
/** A time inside a window, not on its edge: 10:15 UTC. */
const T = Date.UTC(2026, 8, 1, 10, 15, 0);
const WINDOW_END = Date.UTC(2026, 8, 1, 11, 0, 0);

/**
 * The behaviour every RateLimitStore adapter has. `open` gives a store over fresh state each time; the suite
 * closes what it opens.
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

  it('counts hits per key within a window and names its end', async () => {
    await using(async (store) => {
      expect(await store.hit([{ key: 'a', windowMs: HOUR }], T)).toEqual([{ count: 1, resetAt: WINDOW_END }]);
      expect(await store.hit([{ key: 'a', windowMs: HOUR }], T + 1_000)).toEqual([
        { count: 2, resetAt: WINDOW_END },
      ]);
      expect(await store.hit([{ key: 'b', windowMs: HOUR }], T + 2_000)).toEqual([
        { count: 1, resetAt: WINDOW_END },
      ]);
    });
  });

  it('starts again from one in the next window', async () => {
    await using(async (store) => {
      await store.hit([{ key: 'a', windowMs: HOUR }], T);
      await store.hit([{ key: 'a', windowMs: HOUR }], T);
      expect(await store.hit([{ key: 'a', windowMs: HOUR }], WINDOW_END)).toEqual([
        { count: 1, resetAt: WINDOW_END + HOUR },
      ]);
    });
  });

  it('counts several keys in one call, in order, each with its own window', async () => {
    await using(async (store) => {
      await store.hit([{ key: 'ip', windowMs: HOUR }], T);
      expect(
        await store.hit(
          [
            { key: 'ip', windowMs: HOUR },
            { key: 'email', windowMs: 60_000 },
          ],
          T,
        ),
      ).toEqual([
        { count: 2, resetAt: WINDOW_END },
        { count: 1, resetAt: T + 60_000 },
      ]);
    });
  });

  it('loses no hit under 50 concurrent callers', async () => {
    await using(async (store) => {
      await Promise.all(Array.from({ length: 50 }, () => store.hit([{ key: 'hot', windowMs: HOUR }], T)));
      expect(await store.hit([{ key: 'hot', windowMs: HOUR }], T)).toEqual([
        { count: 51, resetAt: WINDOW_END },
      ]);
    });
  });

  it('refuses a window that is not a positive whole number of ms', async () => {
    await using(async (store) => {
      await expect(store.hit([{ key: 'a', windowMs: 0 }], T)).rejects.toThrow(RangeError);
    });
  });
};
