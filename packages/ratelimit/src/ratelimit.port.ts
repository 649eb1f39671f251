/**
 * The RateLimitStore port: sliding-window hit counters. Each key counts its hits in fixed sub-windows of
 * `windowMs` (starting at every multiple of `windowMs` since the epoch); the count of a hit is the estimate of
 * the hits in the sliding window `(now - windowMs, now]`: the current sub-window's hits, this one included, plus
 * the previous sub-window's weighted by the part of it still inside the sliding window (the "sliding window
 * counter" of Cloudflare and nginx; two integers per key). Unlike fixed windows, a burst at the end of one
 * window and another at the start of the next cannot pass twice the limit.
 *
 * Adapters: in process (`createMemoryRateLimitStore`, embedded mode: one gateway, exact) and PostgreSQL
 * (`createPostgresRateLimitStore`, cluster mode: every gateway replica adds its hits to one table in batches,
 * so limits hold across replicas within a stated bound; see its file). Both pass the contract suite of
 * `@marketplace/ratelimit/testing`.
 */
export interface RateLimitHit {
  /** What is counted, e.g. `quote.ip:203.0.113.9`; the caller makes keys of different policies distinct. */
  readonly key: string;
  readonly windowMs: number;
  /** The allowance in the window: what `resetAt` is computed against. */
  readonly limit: number;
}

export interface RateLimitCount {
  /** Hits in the sliding window ending now, this one included (the weighted estimate, rounded down). */
  readonly count: number;
  /**
   * Within `limit`: epoch ms at which every hit counted has left the window (the whole allowance is back; the
   * RateLimit-Reset header). Over it: from when a further hit would be within `limit` again (Retry-After).
   */
  readonly resetAt: number;
}

/** The two sub-window counts of a key as a store keeps them. */
export interface SubWindowCounts {
  /** Start of the sub-window holding `now`. */
  readonly windowStart: number;
  /** Hits in that sub-window, this one included. */
  readonly current: number;
  /** Hits in the sub-window before it. */
  readonly previous: number;
}

export interface RateLimitStore {
  /** Counts one hit on each key (at most one round trip for all of them), in order. */
  hit(hits: readonly RateLimitHit[], now: number): Promise<RateLimitCount[]>;
  close(): Promise<void>;
}

/** The start of the sub-window of `windowMs` holding `now`. */
export const windowStartOf = (now: number, windowMs: number): number => now - (now % windowMs);

/** Throws on a window that is not a positive whole number of milliseconds: a configuration mistake. */
export const checkWindow = (windowMs: number): void => {
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
    throw new RangeError(`a rate-limit window must be a positive whole number of ms, got ${windowMs}`);
  }
};

/**
 * The sliding-window count of a hit at `now` from its key's sub-window counts, and when a further hit would be
 * within `limit` again (pure: both stores use it).
 */
export const slidingCountOf = (
  { windowStart, current, previous }: SubWindowCounts,
  windowMs: number,
  limit: number,
  now: number,
): RateLimitCount => {
  const overlap = 1 - (now - windowStart) / windowMs;
  const count = current + Math.floor(previous * overlap);
  if (count <= limit) {
    // This hit is in the current sub-window: it leaves the sliding window at the end of the next one.
    return { count, resetAt: windowStart + 2 * windowMs };
  }
  // A further hit fits once the estimate is below `limit`: while the previous sub-window's hits fade out, if the
  // current one alone leaves room; otherwise while the current one's fade out in the next sub-window.
  const resetAt =
    current < limit
      ? windowStart + Math.ceil(windowMs * (1 - (limit - current) / previous)) + 1
      : windowStart + windowMs + Math.ceil(windowMs * (1 - limit / current)) + 1;
  return { count, resetAt: Math.max(now, resetAt) };
};
