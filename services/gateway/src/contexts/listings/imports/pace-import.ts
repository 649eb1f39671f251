import { setTimeout as sleep } from 'node:timers/promises';
import type { PaceImport } from './import.worker.js';

export interface ImportPacing {
  /** Each look at the event loop lasts this long: its delay is measured over the window. */
  readonly windowMs: number;
  /** The pause ends once no timer of a whole window fired later than this. */
  readonly maxDelayMs: number;
}

/** However long the chunk before took (or however long ago the last import ran), a pause ends after this. */
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

export const DEFAULT_IMPORT_PACING: ImportPacing = { windowMs: 100, maxDelayMs: 10 };

/**
 * Paces an import by how responsive this process is (docs/imports.md, "How it runs"): before each chunk, it
 * waits until the event loop answered within `maxDelayMs` over a whole window. When the services share the
 * process with the gateway (`pnpm start`: one thread for PGlite and every service), the delay is the consumers
 * still applying the last chunk's events and the requests being served, so the next chunk starts once they had
 * their turn: the import yields to reads instead of keeping the thread's queue full (docs/architecture.md,
 * "Embedded mode: PGlite and the event loop"). A pause never lasts longer than the chunk before it took, so an
 * import gets at least half the time whatever else runs; a gateway of its own (cluster mode) is rarely delayed
 * and pauses for one window.
 */
export const paceByEventLoopDelay = (pacing: ImportPacing = DEFAULT_IMPORT_PACING): PaceImport => {
  let lastChunkStart: number | undefined;
  return async () => {
    const now = performance.now();
    const lastChunkMs = lastChunkStart === undefined ? 0 : now - lastChunkStart;
    const giveUpAt = now + Math.min(lastChunkMs, MAX_PAUSE_MS);
    while ((await eventLoopDelayOver(pacing.windowMs)) > pacing.maxDelayMs && performance.now() < giveUpAt);
    lastChunkStart = performance.now();
  };
};
