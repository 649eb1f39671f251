import { setTimeout as sleep } from 'node:timers/promises';
import type { ChunkPlan, ChunkPlanLimits } from './chunk-plan.js';
import { DEFAULT_CHUNK_PLAN_LIMITS, firstChunkPlan, nextChunkPlan } from './chunk-plan.js';
import type { CatalogApplies, ForegroundLatencies, WrittenListing } from './import.ports.js';
import type { ImportPace } from './import.worker.js';

export interface ImportPacing {
  /** Each look at the event loop lasts this long: its delay is measured over the window. */
  readonly windowMs: number;
  /** The rest goes on while a timer of a whole window fired later than this (never longer than the chunk took). */
  readonly maxDelayMs: number;
  /** After the catalog failed to answer, the worker asks again this much later (while the bound allows). */
  readonly catalogRetryMs: number;
  /** The base forgets requests older than this: with none since, the import goes as if nobody were served. */
  readonly baseMaxAgeMs: number;
  /** The chunks' sizes and rests (`chunk-plan.ts`). */
  readonly limits: ChunkPlanLimits;
}

/** However long the catalog takes to apply a chunk, the worker stops waiting for it after this. */
const MAX_CATALOG_WAIT_MS = 5_000;
/** The base is the median of this many of the latest requests served while the import rested. */
const BASE_REQUESTS = 100;
/** A window looks at the event loop this often: how much later than asked a timer fires is the delay. */
const PROBE_MS = 10;

/** The longest a timer fired late over `windowMs`: how long the event loop was held by other work. */
const eventLoopDelayOver = async (windowMs: number): Promise<number> => {
  let worst = 0;
  const end = performance.now() + windowMs;
  while (performance.now() < end) {
    const before = performance.now();
    await sleep(PROBE_MS);
    worst = Math.max(worst, performance.now() - before - PROBE_MS);
  }
  return worst;
};

export const DEFAULT_IMPORT_PACING: ImportPacing = {
  windowMs: 100,
  maxDelayMs: 10,
  catalogRetryMs: 25,
  baseMaxAgeMs: 30_000,
  limits: DEFAULT_CHUNK_PLAN_LIMITS,
};

/**
 * Paces an import by the foreground requests it slows down (docs/imports.md, "Pacing"). A chunk's work does not
 * end with its bulk call: the listing service's relay publishes its events and every consumer group applies
 * them (the catalog, quotes, saved searches). After each chunk the pace
 * 1. waits until the catalog has applied the last listing the chunk wrote (`catalogApplies`, one call that the
 *    catalog answers when it commits the row): the chunk's window, from its bulk call until then, holds most of
 *    its work, and the next chunk's appends never pile onto it;
 * 2. plans the next chunk (`nextChunkPlan`) from the latencies of the foreground requests that overlapped the
 *    window against those served while the import rested (the base, learned from `foreground`);
 * 3. rests as planned, and on while this process's event loop is held (with `pnpm start` every service shares
 *    the thread), never longer than the chunk took.
 */
export const paceImport = (
  catalogApplies: CatalogApplies,
  foreground: ForegroundLatencies,
  pacing: ImportPacing = DEFAULT_IMPORT_PACING,
): ImportPace => {
  let plan: ChunkPlan = firstChunkPlan(pacing.limits);
  let chunkStart = 0;
  /** When the worker last stopped sending: the requests since then were served while the import rested. */
  let restingSince = -Infinity;
  let base: { readonly learntAt: number; readonly latencyMs: number }[] = [];

  const forgetOldBase = (now: number): void => {
    base = base.filter(({ learntAt }) => learntAt >= now - pacing.baseMaxAgeMs);
  };
  const learnBase = (): void => {
    const now = performance.now();
    forgetOldBase(now);
    const served = foreground.within(Math.max(restingSince, now - pacing.baseMaxAgeMs), now);
    base = [...base, ...served.map((latencyMs) => ({ learntAt: now, latencyMs }))].slice(-BASE_REQUESTS);
    restingSince = now;
  };

  const catalogApplied = async (written: WrittenListing): Promise<void> => {
    const giveUpAt = performance.now() + MAX_CATALOG_WAIT_MS;
    for (;;) {
      const leftMs = Math.ceil(giveUpAt - performance.now());
      if (leftMs <= 0) return;
      try {
        await catalogApplies(written, leftMs);
        return;
      } catch {
        await sleep(Math.min(pacing.catalogRetryMs, leftMs));
      }
    }
  };

  const rest = async (restMs: number, chunkMs: number): Promise<void> => {
    if (restMs <= 0) return;
    const restStart = performance.now();
    const giveUpAt = restStart + Math.max(restMs, Math.min(chunkMs, pacing.limits.maxRestMs));
    for (;;) {
      const delay = await eventLoopDelayOver(Math.min(pacing.windowMs, restMs));
      const now = performance.now();
      if (now >= giveUpAt || (now - restStart >= restMs && delay <= pacing.maxDelayMs)) return;
    }
  };

  return {
    first: async () => {
      learnBase();
      plan = firstChunkPlan(pacing.limits);
      chunkStart = performance.now();
      return plan.rows;
    },
    next: async (written) => {
      if (written !== undefined) await catalogApplied(written);
      const chunkEnd = performance.now();
      restingSince = chunkEnd;
      forgetOldBase(chunkEnd);
      const chunkMs = chunkEnd - chunkStart;
      plan = nextChunkPlan(
        plan,
        {
          chunkMs,
          during: foreground.overlapping(chunkStart, chunkEnd),
          base: base.map(({ latencyMs }) => latencyMs),
        },
        pacing.limits,
      );
      await rest(plan.restMs, chunkMs);
      learnBase();
      chunkStart = performance.now();
      return plan.rows;
    },
  };
};
