import type { Logger } from '@marketplace/platform';
import type { BulkUpsertAnswer } from '../bulk-upsert.js';
import type {
  ApplyChunk,
  ClaimedImport,
  ImportChunk,
  ImportRowResult,
  ListingImportStore,
  WrittenListing,
} from './import.ports.js';

/**
 * Rows per bulk call when nothing paces the import (the engine takes up to 1,000, docs/specification.md, "Bulk
 * upsert"); the gateway's worker sizes each chunk by the foreground it slows down (`pace-import.ts`).
 */
export const IMPORT_CHUNK_ROWS = 250;
/** Longer than one chunk can take (the bulk call's deadline is two minutes), renewed after each chunk. */
const LEASE_MS = 3 * 60_000;
/** After this many failed attempts in a row (the listing service down all along), the import fails. */
const MAX_ATTEMPTS = 5;
const RETRY_DELAY_MS = 10_000;
/**
 * How long an import keeps its gateway's worker before it hands it to the import that has waited longest (at
 * least one chunk each turn), so one seller's large or slow import never holds up the others (docs/imports.md).
 */
export const IMPORT_TURN_MS = 10_000;

/**
 * The chunk's idempotency key: the same for every attempt at the chunk, so a resumed import answers what the
 * first attempt did and writes nothing twice (docs/imports.md).
 */
export const chunkKeyOf = (importId: string, chunk: number): string => `import-${importId}-chunk-${chunk}`;

/**
 * A field at fault as a cell's error: its column, and the entry of a list cell (`galleryImageUrls/1`, the
 * second URL of the gallery cell) in front of the message.
 */
const cellErrorOf = (row: number, field: string, message: string) => {
  const [column = field, ...within] = field.split(/[./]/);
  const [entry] = within;
  if (within.length === 1 && entry !== undefined && /^\d+$/.test(entry)) {
    return { row, column, message: `entry ${Number(entry) + 1} ${message}` };
  }
  return { row, column, message: within.length === 0 ? message : `${within.join('/')} ${message}` };
};

/** The bulk answer's results, index by index, as the rows of the chunk; a field at fault is its column. */
export const chunkResultsOf = (chunk: ImportChunk, answer: BulkUpsertAnswer): ImportRowResult[] =>
  answer.results.map((result) => {
    const row = chunk.rows[result.index]?.row ?? -1;
    if (result.status !== 'error')
      return { row, status: result.status, productId: result.product_id, errors: [] };
    const errors = (result.errors ?? []).map(({ field, message }) => cellErrorOf(row, field, message));
    return {
      row,
      status: 'error',
      errors: errors.length > 0 ? errors : [{ row, column: '', message: result.message ?? 'refused' }],
    };
  });

/** How many rows each chunk takes and when it goes (`pace-import.ts`). */
export interface ImportPace {
  /** Before a run's first chunk: its rows. */
  first(): Promise<number>;
  /**
   * After each chunk, with the last listing it wrote if it wrote any: waits until the next chunk may go, and
   * answers its rows.
   */
  next(written: WrittenListing | undefined): Promise<number>;
}

/** Chunks of IMPORT_CHUNK_ROWS, one right after the other. */
export const UNPACED: ImportPace = {
  first: async () => IMPORT_CHUNK_ROWS,
  next: async () => IMPORT_CHUNK_ROWS,
};

/** The chunk's last row that created or updated a listing: the one the catalog applies last (or nearly). */
export const lastWrittenOf = (
  sellerAccountId: number,
  answer: BulkUpsertAnswer,
): WrittenListing | undefined => {
  const last = answer.results.findLast(
    (result) =>
      (result.status === 'created' || result.status === 'updated') && result.product_id !== undefined,
  );
  return last?.product_id === undefined || last.version === undefined
    ? undefined
    : { sellerAccountId, productId: last.product_id, version: last.version };
};

/**
 * Applies the claimed import chunk by chunk, each chunk one bulk call with no transaction open across it, until
 * it is done or its turn of `turnMs` has passed (then it is handed back: `ListingImportStore.endTurn`).
 */
export const runImport = async (
  store: ListingImportStore,
  apply: ApplyChunk,
  claimed: ClaimedImport,
  pace: ImportPace = UNPACED,
  turnMs = Number.POSITIVE_INFINITY,
): Promise<'done' | 'turn ended'> => {
  const turnEndsAt = performance.now() + turnMs;
  let rows = await pace.first();
  for (
    let chunk = await store.nextChunk(claimed.id, rows);
    chunk;
    chunk = await store.nextChunk(claimed.id, rows)
  ) {
    const answer = await apply({
      sellerAccountId: claimed.sellerAccountId,
      mode: claimed.mode,
      items: chunk.rows.map((row) => row.body),
      idempotencyKey: chunkKeyOf(claimed.id, chunk.chunk),
      correlationId: `import-${claimed.id}`,
    });
    await store.recordChunk(claimed.id, chunkResultsOf(chunk, answer), LEASE_MS);
    rows = await pace.next(lastWrittenOf(claimed.sellerAccountId, answer));
    if (performance.now() >= turnEndsAt) {
      await store.endTurn(claimed.id);
      return 'turn ended';
    }
  }
  await store.finish(claimed.id);
  return 'done';
};

export interface ImportWorker {
  /** Looks for work now rather than at the next poll (after an upload). */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * One import at a time per gateway, in turns: claims the import that has waited longest (or one whose worker
 * died) and applies it for a turn of `turnMs`. A failed chunk is retried later with the same key; after
 * MAX_ATTEMPTS failures in a row the import fails.
 */
export const startImportWorker = (options: {
  readonly store: ListingImportStore;
  readonly apply: ApplyChunk;
  readonly logger: Logger;
  readonly pollMs?: number;
  /** Default: UNPACED. */
  readonly pace?: ImportPace;
  /** Default: IMPORT_TURN_MS. */
  readonly turnMs?: number;
}): ImportWorker => {
  const { store, apply, logger, pace } = options;
  const turnMs = options.turnMs ?? IMPORT_TURN_MS;
  const pollMs = options.pollMs ?? 2_000;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let busy = false;

  const once = async (): Promise<boolean> => {
    const claimed = await store.claim(LEASE_MS);
    if (claimed === undefined) return false;
    try {
      await runImport(store, apply, claimed, pace, turnMs);
    } catch (error) {
      const attempts = await store.release(claimed.id, RETRY_DELAY_MS);
      logger.warn({ err: error, importId: claimed.id, attempts }, 'listing import attempt failed');
      if (attempts >= MAX_ATTEMPTS) {
        await store.finish(claimed.id, `the listing service failed ${attempts} times in a row; upload again`);
      }
    }
    return true;
  };

  const tick = (): void => {
    if (stopped || busy) return;
    busy = true;
    if (timer !== undefined) clearTimeout(timer);
    running = (async () => {
      try {
        while (!stopped && (await once()));
      } catch (error) {
        logger.warn({ err: error }, 'listing import worker could not reach its table');
      } finally {
        busy = false;
        if (!stopped) timer = setTimeout(tick, pollMs);
      }
    })();
  };
  tick();
  return {
    wake: tick,
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
};
