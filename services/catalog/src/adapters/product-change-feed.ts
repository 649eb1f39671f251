import { performance } from 'node:perf_hooks';
import type { Database } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import { DEFAULT_RETRY_POLICY, retryDelayMs } from '@marketplace/eventlog';
import { WakeUp, pause } from '@marketplace/eventsourcing';
import type { Logger } from '@marketplace/platform';
import type { SearchIndex } from '@marketplace/search';
import { toSearchDocument } from '../application/product-search-document.js';
import type { CatalogProduct } from '../domain/catalog-product.js';
import type { SemanticIndexer } from './semantic-indexer.js';

/** A position in the products table's change order: `(transaction_id, change_seq)` of the last row read. */
export interface ChangePosition {
  readonly transactionId: string;
  readonly changeSeq: string;
}

export const START_OF_CHANGES: ChangePosition = { transactionId: '0', changeSeq: '0' };

export interface ProductChanges {
  /** The generation of the listing projection (bumped by a rebuild, which empties the table). */
  readonly generation: number;
  /** The rows written after the position, in change order, with the position of the last one. */
  readonly products: readonly CatalogProduct[];
  readonly last: ChangePosition | undefined;
}

/**
 * Reads up to `limit` product rows written after `after`, with the projection's generation, in one statement
 * (one snapshot: a rebuild's emptied table and its new generation are seen together).
 *
 * Why the xmin rule: `change_seq` comes from a sequence, so a transaction that took a number early but commits
 * late makes its row visible behind rows a reader may already have passed. Only rows whose transaction is older
 * than every transaction still running are read (`transaction_id < pg_snapshot_xmin(pg_current_snapshot())`),
 * in `(transaction_id, change_seq)` order: every later write gets a transaction id at least that xmin, so
 * nothing can appear behind the position any more. The outbox relay reads the events table the same way
 * (`packages/eventsourcing/src/outbox-relay.ts`). A row written again moves to its new position; the reader
 * sees its latest state there.
 */
export const readProductChanges = async (
  db: Database,
  schema: string,
  projection: string,
  after: ChangePosition,
  limit: number,
): Promise<ProductChanges> => {
  const quoted = quoteIdent(schema);
  const { rows } = await db.query<{
    generation: number;
    transaction_id: string | null;
    change_seq: string | null;
    document: unknown;
  }>(
    `select g.generation, p.transaction_id, p.change_seq, p.document
     from (select coalesce((select generation from ${quoted}.projection_generations where projection = $1), 1)
             as generation) g
     left join lateral (
       select transaction_id, change_seq, document from ${quoted}.products
       where (transaction_id, change_seq) > ($2::xid8, $3::bigint)
         and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       order by transaction_id, change_seq
       limit $4) p on true`,
    [projection, after.transactionId, after.changeSeq, limit],
  );
  const changed = rows.filter((row) => row.transaction_id !== null);
  const last = changed.at(-1);
  return {
    generation: Number(rows[0]?.generation ?? 1),
    products: changed.map((row) => row.document as CatalogProduct),
    last: last && { transactionId: last.transaction_id!, changeSeq: String(last.change_seq) },
  };
};

export interface ProductChangeFeedOptions {
  readonly db: Database;
  readonly schema: string;
  /** The listing projection's name in `projection_generations`: a new generation empties the indexes. */
  readonly projection: string;
  readonly index: SearchIndex<CatalogProduct>;
  readonly semantic?: SemanticIndexer;
  readonly logger: Logger;
  /** Rows read per query; default 1000. */
  readonly batchSize?: number;
  /** How often an idle feed looks for changes; default 200 ms (the bound on a replica's lag behind the table). */
  readonly pollIntervalMs?: number;
}

export interface ProductChangeFeed {
  /** Resolves once the indexes hold every committed row (the first pass reached the end of the table). */
  readonly loaded: Promise<{ products: number; ms: number }>;
  /** True once loaded, while the latest read succeeded. */
  isCaughtUp(): boolean;
  /**
   * Reads now rather than at the next poll, and resolves once a read that started after this call was applied
   * (a new generation seen by it has emptied the indexes): a rebuild waits on it.
   */
  sync(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Keeps this replica's search indexes (lexical and vector) in step with every committed write of the products
 * table, whichever replica's projection made it: each replica reads the table by change order, so every replica
 * indexes the whole catalog, not only the events of the partitions its consumer owns. Versioned upserts make a
 * row indexed twice (by the local projection's after-commit step, then here) harmless.
 */
export const startProductChangeFeed = (options: ProductChangeFeedOptions): ProductChangeFeed => {
  const { db, schema, projection, index, semantic } = options;
  const logger = options.logger.child({ component: 'product-change-feed' });
  const batchSize = options.batchSize ?? 1_000;
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const stopping = new AbortController();
  const wakeUp = new WakeUp();
  let loadedOnce = false;
  let failing = false;
  let syncRequests: (() => void)[] = [];
  const loaded = Promise.withResolvers<{ products: number; ms: number }>();
  // Stopped before the first pass ended: whoever awaits the load learns it will not come.
  stopping.signal.addEventListener('abort', () =>
    loaded.reject(new Error('the product change feed stopped')),
  );
  loaded.promise.catch(() => undefined);

  const run = async (): Promise<void> => {
    const start = performance.now();
    let position = START_OF_CHANGES;
    let generation: number | undefined;
    let count = 0;
    let failures = 0;
    while (!stopping.signal.aborted) {
      const syncedByThisRead = syncRequests;
      syncRequests = [];
      try {
        const changes = await readProductChanges(db, schema, projection, position, batchSize);
        if (generation !== undefined && changes.generation !== generation) {
          // A rebuild emptied the table: start again from nothing, as every replica does.
          logger.info(
            { from: generation, to: changes.generation },
            'projection rebuilt: reindexing the table',
          );
          await Promise.all([index.clear(), semantic?.clear()]);
          position = START_OF_CHANGES;
          generation = changes.generation;
          for (const synced of syncedByThisRead) synced();
          continue;
        }
        generation = changes.generation;
        if (changes.last !== undefined) {
          await Promise.all([
            index.upsertMany(changes.products.map(toSearchDocument)),
            semantic?.index(changes.products),
          ]);
          position = changes.last;
          count += changes.products.length;
        }
        failures = 0;
        failing = false;
        for (const synced of syncedByThisRead) synced();
        if (changes.products.length < batchSize) {
          if (!loadedOnce) {
            loadedOnce = true;
            loaded.resolve({ products: count, ms: Math.round(performance.now() - start) });
          }
          await wakeUp.wait(pollIntervalMs, stopping.signal);
        }
      } catch (error) {
        syncRequests.unshift(...syncedByThisRead);
        failures++;
        failing = true;
        const delayMs = retryDelayMs(DEFAULT_RETRY_POLICY, failures);
        logger.warn({ err: error, failures, delayMs }, 'reading product changes failed; retrying');
        await pause(delayMs, stopping.signal);
      }
    }
  };
  const running = run();

  return {
    loaded: loaded.promise,
    isCaughtUp: () => loadedOnce && !failing && !stopping.signal.aborted,
    sync: () =>
      new Promise<void>((resolve) => {
        syncRequests.push(resolve);
        wakeUp.ring();
      }),
    stop: async () => {
      stopping.abort();
      await running;
      for (const synced of syncRequests.splice(0)) synced();
    },
  };
};
