import type { RateLimitStore, SubWindowCounts } from './ratelimit.port.js';
import { checkWindow, slidingCountOf, windowStartOf } from './ratelimit.port.js';

/** A key's two sub-window counts, kept in process. */
export interface SubWindowCounter {
  windowMs: number;
  windowStart: number;
  current: number;
  previous: number;
}

/**
 * Moves `counter` to the sub-window holding `now` (the current count becomes the previous one when the new
 * sub-window follows it; both start from zero after a longer gap).
 */
export const rollTo = (counter: SubWindowCounter, now: number): void => {
  const windowStart = windowStartOf(now, counter.windowMs);
  if (windowStart === counter.windowStart) return;
  counter.previous = windowStart === counter.windowStart + counter.windowMs ? counter.current : 0;
  counter.current = 0;
  counter.windowStart = windowStart;
};

/** A counter has no hit left in any sliding window from `now` on. */
export const hasFadedOut = (counter: SubWindowCounter, now: number): boolean =>
  counter.windowStart + 2 * counter.windowMs <= now;

/** Counters with no hit left in their window are dropped this often, so memory follows the active keys only. */
const SWEEP_INTERVAL_MS = 60_000;

/** In-process sliding-window counters (embedded mode: the one gateway there is); exact. */
export const createMemoryRateLimitStore = (
  options: { readonly clock?: () => number } = {},
): RateLimitStore => {
  const counters = new Map<string, SubWindowCounter>();
  const now = options.clock ?? Date.now;
  const sweep = setInterval(() => {
    const at = now();
    for (const [key, counter] of counters) if (hasFadedOut(counter, at)) counters.delete(key);
  }, SWEEP_INTERVAL_MS);
  sweep.unref();
  return {
    hit: async (hits, at) =>
      hits.map(({ key, windowMs, limit }) => {
        checkWindow(windowMs);
        let counter = counters.get(key);
        if (counter === undefined || counter.windowMs !== windowMs) {
          counter = { windowMs, windowStart: windowStartOf(at, windowMs), current: 0, previous: 0 };
          counters.set(key, counter);
        }
        rollTo(counter, at);
        counter.current += 1;
        const counts: SubWindowCounts = counter;
        return slidingCountOf(counts, windowMs, limit, at);
      }),
    close: async () => {
      clearInterval(sweep);
      counters.clear();
    },
  };
};
