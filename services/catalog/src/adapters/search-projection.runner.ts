import type { Database, Transaction } from '@marketplace/database';
import type { DeliveredBatch, EventLog, LogConsumer } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import type { Logger } from '@marketplace/platform';
import type { SearchIndex } from '@marketplace/search';
import { toSearchDocument } from '../application/product-search-document.js';
import type { CatalogProduct } from '../domain/catalog-product.js';
import { projectListingFact } from '../domain/catalog.projection.js';
import type { ListingFact } from '../domain/listing-fact.js';
import { decodeListingEvent } from './listing-event.decoder.js';
import type { ProductVersionWaits } from './product-version-waits.js';
import { OwnWrites, startProductChangeFeed } from './product-change-feed.js';
import type { ProductsTable } from './products.table.js';
import type { GenerationalProjection } from './projection-generation.js';
import { startGenerationalProjection } from './projection-generation.js';
import { productsTable } from './products.table.js';
import type { SemanticIndexer } from './semantic-indexer.js';

export const LISTING_TOPIC = 'marketplace.listing.v1';
/** The consumer group of the first generation; a rebuild moves to `<this>-g<n>` (projection-generation.ts). */
export const SEARCH_PROJECTION = 'catalog-search-projection';

export interface SearchProjectionOptions {
  readonly db: Database;
  readonly log: EventLog;
  /** The catalog schema, migrated with `catalogMigrations`. */
  readonly schema: string;
  readonly index: SearchIndex<CatalogProduct>;
  /** Keeps the vector index of semantic search; absent without an embedder (EMBEDDINGS_PROVIDER=none). */
  readonly semantic?: SemanticIndexer;
  readonly logger: Logger;
  /** Product rows read per query while loading the indexes and following the table; default 1000. */
  readonly changeBatchSize?: number;
  /** How often the indexes look for rows other replicas wrote; default 200 ms (product-change-feed.ts). */
  readonly changePollIntervalMs?: number;
  /** Told of every committed row this replica learns of, its projection's and its change feed's. */
  readonly versionWaits?: ProductVersionWaits;
}

/**
 * `rebuild()` empties the products table, the record of applied events and both indexes, then replays the topic
 * from its beginning under the next generation's consumer group; searches see a partial catalog until the
 * replay catches up. `isRunning()` is true once the indexes hold the table and the log consumer runs.
 */
export type SearchProjection = GenerationalProjection;

/**
 * The catalog's projection of listing events, kept in two places: the products table (the durable read model,
 * written by `startProjection` in the batch's transaction that also moves the stored offset, so a redelivery has
 * one effect) and the in-memory search indexes (updated from committed rows only, so they never show a write that
 * rolled back). The consumer group splits the topic's partitions between replicas, so the indexes follow the
 * table, not the log: on start they load every row, then read every row any replica writes
 * (product-change-feed.ts); a row this replica's projection commits is also indexed at once. Then the
 * log consumer resumes where the group left off.
 */
export const startSearchProjection = async (options: SearchProjectionOptions): Promise<SearchProjection> => {
  const { db, log, schema, index, semantic, versionWaits } = options;
  const logger = options.logger.child({ component: 'search-projection' });
  const products = productsTable(schema);
  // The rows this projection writes, indexed below once committed: the change feed passes over them.
  const ownWrites = new OwnWrites();

  const changeFeed = startProductChangeFeed({
    db,
    schema,
    projection: SEARCH_PROJECTION,
    index,
    semantic,
    ownWrites,
    versionWaits,
    logger,
    batchSize: options.changeBatchSize,
    pollIntervalMs: options.changePollIntervalMs,
  });
  logger.info(await changeFeed.loaded, 'search indexes loaded from the products table');

  // The index follows the table: after the batch's transaction committed (or found its events already applied),
  // the committed row of each product the batch touched is indexed, once however many of its events the batch
  // held. A row this batch wrote is indexed as written (kept once its transaction committed, so a rolled-back
  // attempt leaves nothing behind), not read back; only a product the batch did not write is read. If indexing
  // fails the batch comes again, is found applied, and is indexed again: versioned upserts make a repeat
  // harmless.
  const written = new Map<string, CatalogProduct>();
  const indexCommittedProducts = async (batch: DeliveredBatch): Promise<void> => {
    const keys = new Set(batch.messages.map((message) => message.key));
    const committed: CatalogProduct[] = [];
    for (const key of keys) {
      const product = written.get(key) ?? (await products.find(db, key));
      written.delete(key);
      if (product !== undefined) committed.push(product);
    }
    if (committed.length === 0) return;
    await index.upsertMany(committed.map(toSearchDocument));
    await semantic?.index(committed);
  };

  const consume = (group: string): Promise<LogConsumer> =>
    startProjection<ListingFact | undefined>({
      log,
      afterBatch: indexCommittedProducts,
      db,
      schema,
      topic: LISTING_TOPIC,
      group,
      decode: (message) => decodeListingEvent(message.value),
      // Every listing event carries the whole listing (listing-fact.ts): a product's last event in a batch is
      // the only one to write. An event of an unknown kind replaces nothing.
      supersedes: (fact) => fact !== undefined,
      // The batch's products are read (and locked) in one statement and written in one: a batch of N listing
      // events costs two statements, not 2N.
      applyBatch: async (tx, events) => {
        const facts: ListingFact[] = [];
        for (const { event: fact, message } of events) {
          if (fact === undefined) {
            logger.warn(
              { offset: message.offset, key: message.key },
              'skipped a listing event of an unknown kind',
            );
          } else {
            facts.push(fact);
          }
        }
        const saved = await applyFacts(tx, products, facts);
        if (saved.length > 0) {
          db.afterCommit(() => {
            for (const product of saved) {
              written.set(product.id, product);
              // Once committed only: a note of a write that rolled back could hide that version written by
              // another replica.
              ownWrites.note(product.id, product.version);
            }
            versionWaits?.seen(saved);
          });
        }
      },
    });

  const generational = await startGenerationalProjection({
    db,
    schema,
    name: SEARCH_PROJECTION,
    log,
    topic: LISTING_TOPIC,
    logger,
    consume,
    reset: (tx) => products.deleteAll(tx),
    // The change feed sees the new generation and empties the indexes (every replica's feed does the same).
    afterReset: () => changeFeed.sync(),
  }).catch(async (error: unknown) => {
    await changeFeed.stop();
    throw error;
  });
  return {
    isRunning: () => generational.isRunning() && changeFeed.isCaughtUp(),
    group: () => generational.group(),
    rebuild: async () => {
      const previous = generational.group();
      await generational.rebuild();
      logger.info(
        { previous, group: generational.group() },
        'catalog rebuild started: replaying the listing topic from the beginning',
      );
    },
    stop: async () => {
      await generational.stop();
      await changeFeed.stop();
    },
  };
};

/**
 * Folds the batch's facts into their products' rows: one read of them all (locked, so two writers of one product
 * queue) and one write of those that changed, whatever the number of facts. Facts of one product fold in order.
 * Answers the rows written.
 */
const applyFacts = async (
  tx: Transaction,
  products: ProductsTable,
  facts: readonly ListingFact[],
): Promise<CatalogProduct[]> => {
  if (facts.length === 0) return [];
  const current = await products.findManyForUpdate(tx, [...new Set(facts.map((fact) => fact.productId))]);
  const changed = new Map<string, CatalogProduct>();
  for (const fact of facts) {
    const next = projectListingFact(changed.get(fact.productId) ?? current.get(fact.productId), fact);
    if (next !== undefined) changed.set(fact.productId, next);
  }
  const saved = [...changed.values()];
  await products.saveMany(tx, saved);
  return saved;
};
