import { IMPORT_CHUNK_ROWS } from './import.worker.js';

/**
 * How big the import's next chunk is and how long the worker rests before it (docs/imports.md, "Pacing"): the
 * import is a background scavenger of the machine. It grows its chunks while the foreground requests it overlaps
 * are about as fast as those served while it rests (the base), and halves them once they are not: additive
 * increase, multiplicative decrease, after a slow start (doubling from a small first chunk, so the first chunk,
 * whose consumers run cold, stays small). With no foreground request at all it goes at full size and never rests.
 * Pure: observations in, the next plan out.
 */

export interface ChunkPlanLimits {
  /** The smallest and largest chunk (rows); the bulk engine takes up to 1,000 (docs/specification.md). */
  readonly minRows: number;
  readonly maxRows: number;
  /** An import's first chunk (slow start). */
  readonly startRows: number;
  /** Added after each chunk that kept the foreground near its base, once the slow start has ended. */
  readonly stepRows: number;
  /** Foreground latency during a chunk above this many times the base halves the next chunk. */
  readonly excessFactor: number;
  /** While foreground requests come, the worker rests this share of the chunk's time before the next one. */
  readonly restShare: number;
  readonly maxRestMs: number;
}

export const DEFAULT_CHUNK_PLAN_LIMITS: ChunkPlanLimits = {
  minRows: 25,
  maxRows: IMPORT_CHUNK_ROWS,
  startRows: 25,
  stepRows: 25,
  excessFactor: 1.5,
  // While others are served an import works at most a tenth of the time: every chunk's burst slows some of the
  // requests it meets, however small the chunk, so only fewer bursts keep the foreground's tail (docs/imports.md).
  // IMPORT_REST_SHARE sets another share.
  restShare: 9,
  maxRestMs: 5_000,
};

export interface ChunkPlan {
  readonly rows: number;
  readonly restMs: number;
  /** Doubling until the foreground first exceeds its base; adding `stepRows` after. */
  readonly slowStart: boolean;
}

/** What the worker saw of one chunk, from its bulk call until the catalog had applied it. */
export interface ChunkObservation {
  readonly chunkMs: number;
  /** Latencies (ms) of the foreground requests that overlapped the chunk. */
  readonly during: readonly number[];
  /** Latencies (ms) of the latest foreground requests served while the import rested (or before it began). */
  readonly base: readonly number[];
}

const clamp = (value: number, low: number, high: number): number => Math.min(high, Math.max(low, value));

/** The middle latency: the base is the typical request, not its tail, so one slow request does not raise it. */
export const medianOf = (latencies: readonly number[]): number | undefined => {
  if (latencies.length === 0) return undefined;
  const sorted = [...latencies].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/** The mean: one request a chunk held far longer than the rest counts, as it does in the tail a reader sees. */
const meanOf = (latencies: readonly number[]): number | undefined =>
  latencies.length === 0
    ? undefined
    : latencies.reduce((sum, latency) => sum + latency, 0) / latencies.length;

export const firstChunkPlan = (limits: ChunkPlanLimits = DEFAULT_CHUNK_PLAN_LIMITS): ChunkPlan => ({
  rows: clamp(limits.startRows, limits.minRows, limits.maxRows),
  restMs: 0,
  slowStart: true,
});

/** The next chunk's plan from the one before and what its chunk did to the foreground. */
export const nextChunkPlan = (
  plan: ChunkPlan,
  seen: ChunkObservation,
  limits: ChunkPlanLimits = DEFAULT_CHUNK_PLAN_LIMITS,
): ChunkPlan => {
  const during = meanOf(seen.during);
  const base = medianOf(seen.base);
  if (during === undefined && base === undefined) {
    return { rows: limits.maxRows, restMs: 0, slowStart: plan.slowStart };
  }
  const restMs = clamp(seen.chunkMs * limits.restShare, 0, limits.maxRestMs);
  // Foreground with no base yet: the rest will show it; the size stays until then.
  if (base === undefined) return { ...plan, restMs };
  if (during !== undefined && during > base * limits.excessFactor) {
    return {
      rows: clamp(Math.floor(plan.rows / 2), limits.minRows, limits.maxRows),
      restMs,
      slowStart: false,
    };
  }
  const grown = plan.slowStart ? plan.rows * 2 : plan.rows + limits.stepRows;
  return { rows: clamp(grown, limits.minRows, limits.maxRows), restMs, slowStart: plan.slowStart };
};
