import type { RateLimitStore } from './ratelimit.port.js';
import { checkWindow, windowStartOf } from './ratelimit.port.js';

interface Counter {
  windowStart: number;
  windowMs: number;
  count: number;
}

/** Counters whose window ended are dropped this often, so memory follows the active keys only. */
const SWEEP_INTERVAL_MS = 60_000;

/** In-process counters (embedded mode: the one gateway there is). */
export const createMemoryRateLimitStore = (
  options: { readonly clock?: () => number } = {},
): RateLimitStore => {
  const counters = new Map<string, Counter>();
  const now = options.clock ?? Date.now;
  const sweep = setInterval(() => {
    const at = now();
    for (const [key, counter] of counters) {
      if (counter.windowStart + counter.windowMs <= at) counters.delete(key);
    }
  }, SWEEP_INTERVAL_MS);
  sweep.unref();
  return {
    hit: async (hits, at) =>
      hits.map(({ key, windowMs }) => {
        checkWindow(windowMs);
        const windowStart = windowStartOf(at, windowMs);
        const counter = counters.get(key);
        if (counter === undefined || counter.windowStart !== windowStart || counter.windowMs !== windowMs) {
          counters.set(key, { windowStart, windowMs, count: 1 });
          return { count: 1, resetAt: windowStart + windowMs };
        }
        counter.count += 1;
        return { count: counter.count, resetAt: windowStart + windowMs };
      }),
    close: async () => {
      clearInterval(sweep);
      counters.clear();
    },
  };
};
