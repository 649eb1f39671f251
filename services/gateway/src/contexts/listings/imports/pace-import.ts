import { setTimeout as sleep } from 'node:timers/promises';
import type { CatalogHasListing } from './import.ports.js';
import type { PaceImport } from './import.worker.js';

export interface ImportPacing {
  /** Each look at the event loop lasts this long: its delay is measured over the window. */
  readonly windowMs: number;
  /** The rest ends once no timer of a whole window fired later than this (and the rest's share has passed). */
  readonly maxDelayMs: number;
  /** The catalog is asked this often whether it has applied the chunk before. */
  readonly catalogPollMs: number;
  /**
   * Once the catalog has applied a chunk, the import rests at least this share of the chunk's whole time (its
   * call and the consumers' catching up): with 0.5 it keeps the machine busy two thirds of the time at most.
   */
  readonly restShare: number;
}

/** However long the chunk before took (or however long ago the last import ran), each wait ends after this. */
const MAX_PAUSE_MS = 5_000;
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
  catalogPollMs: 25,
  restShare: 0.5,
};

/**
 * Paces an import by its consumers and by how responsive this process is (docs/imports.md, "How it runs"). A
 * chunk's work does not end with its bulk call: the listing service's relay publishes its events and every
 * consumer group applies them (the catalog, quotes, saved searches), each with its database work. Before the next
 * chunk, the pace
 * 1. waits until the catalog has applied the last listing the chunk before wrote (`catalogHas`), so the next
 *    chunk's appends never pile onto the consumers' burst of the one before;
 * 2. then rests `restShare` of that chunk's whole time, and on while this process's event loop is held (a timer
 *    of a window fired more than `maxDelayMs` late: with `pnpm start` every service shares the thread), but never
 *    longer than the chunk took, so an import gets at least half the time whatever else runs.
 * In cluster mode each service is a process of its own and they share the machine's cores: a search waits in the
 * run queue behind whichever of them is busy, so the import yields the cores between its chunks.
 */
export const paceImport = (
  catalogHas: CatalogHasListing,
  pacing: ImportPacing = DEFAULT_IMPORT_PACING,
): PaceImport => {
  let lastChunkStart: number | undefined;
  return async (previous) => {
    if (previous !== undefined) {
      const giveUpAt = performance.now() + MAX_PAUSE_MS;
      while (!(await catalogHas(previous)) && performance.now() < giveUpAt) await sleep(pacing.catalogPollMs);
    }
    const restStart = performance.now();
    const chunkMs = lastChunkStart === undefined ? 0 : restStart - lastChunkStart;
    const restMs = Math.min(chunkMs * pacing.restShare, MAX_PAUSE_MS);
    const giveUpAt = restStart + Math.min(chunkMs, MAX_PAUSE_MS);
    for (;;) {
      const delay = await eventLoopDelayOver(pacing.windowMs);
      const now = performance.now();
      if (now >= giveUpAt || (now - restStart >= restMs && delay <= pacing.maxDelayMs)) break;
    }
    lastChunkStart = performance.now();
  };
};
