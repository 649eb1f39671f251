/**
 * The RateLimitStore port: fixed-window hit counters. A window of `windowMs` starts at every multiple of
 * `windowMs` since the epoch; each hit adds one to its key's count in the window holding `now`, and a new window
 * starts again from one. Fixed windows cost one counter per key (one row, one statement per request in
 * PostgreSQL); their known weakness, up to twice the limit across a window boundary, is acceptable for abuse
 * limits of this kind.
 *
 * Adapters: in process (`createMemoryRateLimitStore`, embedded mode: one gateway) and PostgreSQL
 * (`createPostgresRateLimitStore`, cluster mode: every gateway replica counts in one table, so limits hold across
 * replicas). Both pass the contract suite of `@marketplace/ratelimit/testing`.
 */
export interface RateLimitHit {
  /** What is counted, e.g. `quote.ip:203.0.113.9`; the caller makes keys of different policies distinct. */
  readonly key: string;
  readonly windowMs: number;
}

export interface RateLimitCount {
  /** Hits in the current window, this one included. */
  readonly count: number;
  /** Epoch ms at which the window ends and the count starts again. */
  readonly resetAt: number;
}

export interface RateLimitStore {
  /** Counts one hit on each key (one round trip for all of them), in order. */
  hit(hits: readonly RateLimitHit[], now: number): Promise<RateLimitCount[]>;
  close(): Promise<void>;
}

/** The start of the window of `windowMs` holding `now`. */
export const windowStartOf = (now: number, windowMs: number): number => now - (now % windowMs);

/** Throws on a window that is not a positive whole number of milliseconds: a configuration mistake. */
export const checkWindow = (windowMs: number): void => {
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
    throw new RangeError(`a rate-limit window must be a positive whole number of ms, got ${windowMs}`);
  }
};
