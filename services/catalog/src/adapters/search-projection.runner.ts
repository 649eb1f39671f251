import { performance } from 'node:perf_hooks';
import type { Database, Transaction } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { DeliveredMessage, EventLog, Subscription } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import type { Logger } from '@marketplace/platform';
import type { SearchIndex } from '@marketplace/search';
import { toSearchDocument } from '../application/product-search-document.js';
import type { CatalogProduct } from '../domain/catalog-product.js';
import { projectListingFact } from '../domain/catalog.projection.js';
import type { ListingFact } from '../domain/listing-fact.js';
import { decodeListingEvent } from './listing-event.decoder.js';
import type { CreationCursor, ProductsTable } from './products.table.js';
import { productsTable } from './products.table.js';
import type { SemanticIndexer } from './semantic-indexer.js';

export const LISTING_TOPIC = 'marketplace.listing.v1';
/**
 * The consumer group of the first generation; a rebuild moves to `<this>-g<n>`. `<service>-<purpose>` rather
 * than `<service>.<purpose>`: the EventLog port allows no dots in group names (NATS durable names).
 */
export const SEARCH_PROJECTION = 'catalog-search-projection';

export const searchProjectionGroup = (generation: number): string =>
  generation === 1 ? SEARCH_PROJECTION : `${SEARCH_PROJECTION}-g${generation}`;

export interface SearchProjectionOptions {
  readonly db: Database;
  readonly log: EventLog;
  /** The catalog schema, migrated with `catalogMigrations`. */
  readonly schema: string;
  readonly index: SearchIndex<CatalogProduct>;
  /** Keeps the vector index of semantic search; absent without an embedder (EMBEDDINGS_PROVIDER=none). */
  readonly semantic?: SemanticIndexer;
  readonly logger: Logger;
  /** Products read per query while loading the index; default 1000. */
  readonly loadPageSize?: number;
}

export interface SearchProjection {
  /** True once the index holds the products table and the subscription runs (false during a rebuild). */
  isRunning(): boolean;
  /** The consumer group currently subscribed. */
  group(): string;
  /**
   * Rebuilds the catalog from the log: stops the subscription, empties the products table, the record of
   * applied events and the index, then replays the topic from its beginning under the next generation's
   * consumer group. Searches see a partial catalog until the replay catches up.
   */
  rebuild(): Promise<void>;
  /** Closes the subscription (the message in hand finishes and is committed). */
  stop(): Promise<void>;
}

/**
 * The catalog's projection of listing events, kept in two places: the products table (the durable read model,
 * written by `startProjection` in the transaction that records the event as applied, so a redelivery has one
 * effect) and the in-memory search index (updated from the committed row, so it never shows a write that
 * rolled back). On start the index is loaded from the table, then the subscription resumes where the group
 * left off.
 */
export const startSearchProjection = async (options: SearchProjectionOptions): Promise<SearchProjection> => {
  const { db, log, schema, index, semantic } = options;
  const logger = options.logger.child({ component: 'search-projection' });
  const products = productsTable(schema);
  const generations = `${quoteIdent(schema)}.projection_generations`;
  const appliedEvents = `${quoteIdent(schema)}.projection_applied_events`;

  const loaded = await loadIndexes(db, products, index, semantic, options.loadPageSize ?? 1_000);
  logger.info(loaded, 'search indexes loaded from the products table');

  // The index follows the table: after the projection's transaction committed (or found the event already
  // applied), the product's committed row is indexed. Versioned upserts make a repeat harmless.
  const indexCommittedProduct = async (message: DeliveredMessage): Promise<void> => {
    const product = await products.find(db, message.key);
    if (product === undefined) return;
    await index.upsert(toSearchDocument(product));
    await semantic?.index([product]);
  };

  const subscribe = (group: string): Promise<Subscription> =>
    startProjection<ListingFact | undefined>({
      log: afterEachHandled(log, indexCommittedProduct),
      db,
      schema,
      topic: LISTING_TOPIC,
      group,
      decode: (message) => decodeListingEvent(message.value),
      apply: async (tx, fact, message) => {
        if (fact === undefined) {
          logger.warn(
            { offset: message.offset, key: message.key },
            'skipped a listing event of an unknown kind',
          );
          return;
        }
        await applyFact(tx, products, fact);
      },
    });

  const { rows } = await db.query<{ generation: number }>(
    `select generation from ${generations} where projection = $1`,
    [SEARCH_PROJECTION],
  );
  let group = searchProjectionGroup(rows[0]?.generation ?? 1);
  let subscription: Subscription | undefined = await subscribe(group);
  let rebuilding: Promise<void> | undefined;

  const rebuild = async (): Promise<void> => {
    const previous = group;
    await subscription?.close();
    subscription = undefined;
    const generation = await db.transaction(async (tx) => {
      await products.deleteAll(tx);
      await tx.query(`delete from ${appliedEvents} where projection = $1`, [previous]);
      const bumped = await tx.query<{ generation: number }>(
        `insert into ${generations} (projection, generation) values ($1, 2)
         on conflict (projection) do update set generation = ${generations}.generation + 1
         returning generation`,
        [SEARCH_PROJECTION],
      );
      return bumped.rows[0]!.generation;
    });
    await index.clear();
    await semantic?.clear();
    group = searchProjectionGroup(generation);
    subscription = await subscribe(group);
    logger.info(
      { previous, group },
      'catalog rebuild started: replaying the listing topic from the beginning',
    );
  };

  return {
    isRunning: () => subscription !== undefined,
    group: () => group,
    rebuild: () => (rebuilding ??= rebuild().finally(() => (rebuilding = undefined))),
    stop: async () => {
      await rebuilding?.catch(() => undefined);
      await subscription?.close();
      subscription = undefined;
    },
  };
};

/** Folds a fact into the product's row; the row lock orders two writers of one product. */
const applyFact = async (tx: Transaction, products: ProductsTable, fact: ListingFact): Promise<void> => {
  const next = projectListingFact(await products.findForUpdate(tx, fact.productId), fact);
  if (next !== undefined) await products.save(tx, next);
};

/**
 * Pages through the table in creation order into the lexical index (its worker thread) and the vector index
 * (embeddings from their table, computed for products without a current one); both yield to the event loop as
 * they go, and the worker indexes one page while this thread does the vectors of the same page.
 */
const loadIndexes = async (
  db: Database,
  products: ProductsTable,
  index: SearchIndex<CatalogProduct>,
  semantic: SemanticIndexer | undefined,
  pageSize: number,
): Promise<{ products: number; ms: number }> => {
  const start = performance.now();
  let count = 0;
  let after: CreationCursor | undefined;
  for (;;) {
    const page = await products.pageInCreationOrder(db, after, pageSize);
    await Promise.all([index.upsertMany(page.map(toSearchDocument)), semantic?.index(page)]);
    count += page.length;
    const last = page.at(-1);
    if (last === undefined || page.length < pageSize) break;
    after = { createdAtMs: last.createdAtMs, id: last.id };
  }
  return { products: count, ms: Math.round(performance.now() - start) };
};

/**
 * The log as `startProjection` sees it, with `after(message)` run once each handler resolved, that is after
 * the projection's transaction committed and before the message is acknowledged: if `after` fails, the
 * message comes again and the projection skips the already-applied event but `after` runs once more.
 */
const afterEachHandled = (log: EventLog, after: (message: DeliveredMessage) => Promise<void>): EventLog => ({
  publish: (topic, messages) => log.publish(topic, messages),
  subscribe: (options) =>
    log.subscribe({
      ...options,
      handler: async (message) => {
        await options.handler(message);
        await after(message);
      },
    }),
  close: () => log.close(),
});
