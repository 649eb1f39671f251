import { performance } from 'node:perf_hooks';
import type { Database } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import { DEFAULT_RETRY_POLICY, pause, retryDelayMs, WakeUp } from '@marketplace/eventlog';
import type { Logger } from '@marketplace/platform';
import type { SearchIndex } from '@marketplace/search';
import { toSearchDocument } from '../application/product-search-document.js';
import type { CatalogProduct } from '../domain/catalog-product.js';
import type { ProductVersionWaits } from './product-version-waits.js';
import type { SemanticIndexer } from './semantic-indexer.js';

/** A position in the products table's change order: `(transaction_id, change_seq)` of the last row read. */
export interface ChangePosition {
  readonly transactionId: string;
  readonly changeSeq: string;
}

export const START_OF_CHANGES: ChangePosition = { transactionId: '0', changeSeq: '0' };

/**
 * The product versions this replica's projection wrote and indexes itself (search-projection.runner.ts), noted
 * once committed. The feed reads their rows without the document and indexes nothing for them, so a replica's own
 * writes are neither read back whole nor indexed twice; a read sent before a note was made reads the row whole,
 * and still passes over it if the note was made by the time it answered. A note leaves when the feed passes its
 * row; a full set starts over (the feed then reads those rows whole, as another replica's).
 */
export class OwnWrites {
  readonly #versions = new Map<string, number>();

  note(id: string, version: number): void {
    if (this.#versions.size >= OWN_WRITES_CAPACITY) this.#versions.clear();
    this.#versions.set(id, Math.max(version, this.#versions.get(id) ?? version));
  }

  /** Whether the feed may pass over `id`'s row at `version`; a note at or below it is done with. */
  passesOver(id: string, version: number): boolean {
    const noted = this.#versions.get(id);
    if (noted === undefined) return false;
    if (noted <= version) this.#versions.delete(id);
    return noted >= version;
  }

  clear(): void {
    this.#versions.clear();
  }

  get ids(): string[] {
    return [...this.#versions.keys()];
  }

  get versions(): number[] {
    return [...this.#versions.values()];
  }
}

/** Notes pending at once: a few polls' worth of the projection's writes, far below a statement's parameters. */
const OWN_WRITES_CAPACITY = 10_000;

export interface ProductChanges {
  /** The generation of the listing projection (bumped by a rebuild, which empties the table). */
  readonly generation: number;
  /**
   * The rows written after the position, in change order, with the position of the last one; the rows of
   * `ownWrites` at (or below) their noted version are passed over, not answered.
   */
  readonly products: readonly CatalogProduct[];
  /** How many rows the read passed, own writes included: fewer than asked is the end of the table. */
  readonly rows: number;
  readonly last: ChangePosition | undefined;
  /**
   * The last row read behind the stability horizon: no row can appear before it any more (see
   * readProductChanges). The same as `last` unless `includeUnstable` was asked.
   */
  readonly stableLast: ChangePosition | undefined;
  /** `pg_snapshot_xmin` of the read: every transaction below it had ended. */
  readonly horizon: string;
}

export interface ReadProductChangesOptions {
  /**
   * Also read the committed rows of transactions at or above the horizon (a full picture of the table now, for
   * the first load: a long transaction anywhere on the server holds the horizon back).
   */
  readonly includeUnstable?: boolean;
  /** The horizon `stableLast` is measured against; default the read's own. */
  readonly stableBelow?: string;
  /** Rows this replica indexes itself: read without their document, and passed over (`OwnWrites`). */
  readonly ownWrites?: OwnWrites;
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
  { includeUnstable = false, stableBelow, ownWrites }: ReadProductChangesOptions = {},
): Promise<ProductChanges> => {
  const quoted = quoteIdent(schema);
  const { rows } = await db.query<{
    generation: number;
    horizon: string;
    transaction_id: string | null;
    change_seq: string | null;
    product_id: string | null;
    version: string | number | null;
    document: unknown;
  }>(
    `select g.generation, g.horizon, p.transaction_id, p.change_seq, p.product_id, p.version,
            case when own.version >= p.version then null else p.document end as document
     from (select coalesce((select generation from ${quoted}.projection_generations where projection = $1), 1)
             as generation, pg_snapshot_xmin(pg_current_snapshot()) as horizon) g
     left join lateral (
       select transaction_id, change_seq, product_id, version, document from ${quoted}.products
       where (transaction_id, change_seq) > ($2::xid8, $3::bigint)
         and ($5::boolean or transaction_id < g.horizon)
       order by transaction_id, change_seq
       limit $4) p on true
     left join unnest($6::text[], $7::bigint[]) as own (product_id, version) on own.product_id = p.product_id
     order by p.transaction_id, p.change_seq`,
    [
      projection,
      after.transactionId,
      after.changeSeq,
      limit,
      includeUnstable,
      ownWrites?.ids ?? [],
      ownWrites?.versions ?? [],
    ],
  );
  const horizon = String(rows[0]?.horizon ?? '0');
  const stableHorizon = BigInt(stableBelow ?? horizon);
  const changed = rows.filter((row) => row.transaction_id !== null);
  const positionOf = (row: (typeof changed)[number]): ChangePosition => ({
    transactionId: row.transaction_id!,
    changeSeq: String(row.change_seq),
  });
  const last = changed.at(-1);
  // Rows come in transaction order, so the stable ones are a prefix.
  const stable = changed.filter((row) => BigInt(row.transaction_id!) < stableHorizon).at(-1);
  const products = changed.flatMap((row) =>
    ownWrites?.passesOver(row.product_id!, Number(row.version)) === true || row.document === null
      ? []
      : [row.document as CatalogProduct],
  );
  return {
    generation: Number(rows[0]?.generation ?? 1),
    horizon,
    products,
    rows: changed.length,
    last: last && positionOf(last),
    stableLast: stable && positionOf(stable),
  };
};

export interface ProductChangeFeedOptions {
  readonly db: Database;
  readonly schema: string;
  /** The listing projection's name in `projection_generations`: a new generation empties the indexes. */
  readonly projection: string;
  readonly index: SearchIndex<CatalogProduct>;
  readonly semantic?: SemanticIndexer;
  /** What this replica's projection indexes itself; cleared with the indexes by a rebuild. */
  readonly ownWrites?: OwnWrites;
  /** Told of the rows read, once indexed. */
  readonly versionWaits?: ProductVersionWaits;
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
 * indexes the whole catalog, not only the events of the partitions its consumer owns. The rows the local projection
 * indexes itself (`ownWrites`) are passed over; versioned upserts make a row indexed twice harmless all the same.
 */
export const startProductChangeFeed = (options: ProductChangeFeedOptions): ProductChangeFeed => {
  const { db, schema, projection, index, semantic, ownWrites, versionWaits } = options;
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
    // Every row before `position` was read, and no row can appear before it any more: the follow reads go on
    // from there. The first load also reads the rows of transactions above the horizon (`loadPosition`), so a
    // long transaction elsewhere on the server cannot leave committed rows out of a replica that says it is
    // loaded; those rows are read again from `position` afterwards (versioned upserts make that harmless). Its
    // stable prefix is measured against the horizon of its first read: a transaction that ended between two of
    // its reads may have written behind the rows already passed.
    let position = START_OF_CHANGES;
    let loadPosition = START_OF_CHANGES;
    let loadHorizon: string | undefined;
    let generation: number | undefined;
    let count = 0;
    let failures = 0;
    while (!stopping.signal.aborted) {
      const syncedByThisRead = syncRequests;
      syncRequests = [];
      // A sync asked while this read runs is seen by the wait below, which then returns at once.
      const seen = wakeUp.generation;
      const loading = !loadedOnce;
      try {
        const changes = loading
          ? await readProductChanges(db, schema, projection, loadPosition, batchSize, {
              includeUnstable: true,
              stableBelow: loadHorizon,
            })
          : await readProductChanges(db, schema, projection, position, batchSize, { ownWrites });
        if (generation !== undefined && changes.generation !== generation) {
          // A rebuild emptied the table: start again from nothing, as every replica does.
          logger.info(
            { from: generation, to: changes.generation },
            'projection rebuilt: reindexing the table',
          );
          ownWrites?.clear();
          await Promise.all([index.clear(), semantic?.clear()]);
          position = START_OF_CHANGES;
          loadPosition = START_OF_CHANGES;
          loadHorizon = undefined;
          generation = changes.generation;
          for (const synced of syncedByThisRead) synced();
          continue;
        }
        generation = changes.generation;
        if (loading) loadHorizon ??= changes.horizon;
        if (changes.last !== undefined) {
          if (changes.products.length > 0) {
            await Promise.all([
              index.upsertMany(changes.products.map(toSearchDocument)),
              semantic?.index(changes.products),
            ]);
            versionWaits?.seen(changes.products);
          }
          if (changes.stableLast !== undefined) position = changes.stableLast;
          if (loading) loadPosition = changes.last;
          count += changes.products.length;
        }
        failures = 0;
        failing = false;
        for (const synced of syncedByThisRead) synced();
        if (changes.rows < batchSize) {
          if (loading) {
            loadedOnce = true;
            loaded.resolve({ products: count, ms: Math.round(performance.now() - start) });
            // Straight on to the rows above the horizon, from the stable position.
            continue;
          }
          await wakeUp.wait(seen, pollIntervalMs, stopping.signal);
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
        wakeUp.notify();
      }),
    stop: async () => {
      stopping.abort();
      await running;
      for (const synced of syncRequests.splice(0)) synced();
    },
  };
};
