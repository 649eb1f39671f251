import { performance } from 'node:perf_hooks';
import type { Database } from '@marketplace/database';
import { createEmbeddedDatabase, createPostgresDatabase, migrate, quoteIdent } from '@marketplace/database';
import type { EventLog } from '@marketplace/eventlog';
import { createLogger } from '@marketplace/platform';
import { join } from 'node:path';
import { loadLocalEmbedder } from '@marketplace/embeddings';
import {
  createEmbeddedSearchIndex,
  createHnswVectorIndex,
  createWorkerSearchIndex,
} from '@marketplace/search';
import { catalogMigrations } from '../src/adapters/catalog.migrations.js';
import { startSearchProjection } from '../src/adapters/search-projection.runner.js';
import { createSemanticIndexer } from '../src/adapters/semantic-indexer.js';
import type { CatalogProduct } from '../src/domain/catalog-product.js';

/**
 * How long the catalog takes to load its search indexes from the products table at start-up: the lexical index
 * alone, then both indexes as the service loads them (lexical in its worker thread, vectors with the local
 * embedder): a first start that embeds every listing and stores the embeddings, and a restart that reuses them.
 * Run: `node services/catalog/dist/bench/measure-index-load.js [products] [postgres-url]`; without a URL it
 * measures PGlite in memory. Fills a scratch schema, measures, drops it. The local embedder's table is read
 * from (or converted into) `DATA_DIR/embeddings`.
 */
const SIZE = Number(process.argv[2] ?? 100_000);
const URL = process.argv[3];
const INSERT_BATCH = 1_000;
const WORDS = (
  'pallet lot case box new sealed refurbished returns overstock wireless charger cable laptop monitor ' +
  'drill saw hammer blender kettle mixer shirt jacket shoes toy puzzle lamp chair desk cream lotion bottle ' +
  'black white steel cotton leather plastic bulk wholesale units assorted mixed grade tested working'
).split(' ');

const product = (n: number): CatalogProduct => {
  const word = (i: number): string => WORDS[(n * 7 + i * 13 + ((n >> i) & 7)) % WORDS.length]!;
  return {
    id: `product_${n}`,
    sellerAccountId: 1 + (n % 500),
    title: `${word(1)} ${word(2)} ${word(3)} model X${n % 997}-${n % 89}`,
    description: Array.from({ length: 40 }, (_, i) => word(i + 4)).join(' '),
    sku: `SKU-${n}`,
    category: ['electronics', 'tools', 'toys', 'apparel'][n % 4]!,
    condition: 'overstock',
    priceCents: 100 + ((n * 7919) % 100_000),
    currency: 'USD',
    quantity: n % 50,
    minOrderQuantity: 1,
    minQuoteQuantity: 0,
    brand: '',
    imageUrls: [`/images/${n}.jpg`],
    instantCheckout: false,
    promotePublicly: n % 10 !== 0,
    createdAtMs: Date.UTC(2026, 0, 1) + n * 1_000,
    updatedAtMs: Date.UTC(2026, 0, 1) + n * 1_000,
    version: 1,
  };
};

const fill = async (db: Database, schema: string): Promise<void> => {
  for (let first = 1; first <= SIZE; first += INSERT_BATCH) {
    const batch = Array.from({ length: Math.min(INSERT_BATCH, SIZE - first + 1) }, (_, i) =>
      product(first + i),
    );
    await db.query(
      `insert into ${quoteIdent(schema)}.products (product_id, version, created_at_ms, document)
       select d->>'id', (d->>'version')::bigint, (d->>'createdAtMs')::bigint, d
       from jsonb_array_elements($1::jsonb) as d`,
      [JSON.stringify(batch)],
    );
  }
};

/** The load happens before the subscription; a log that subscribes to nothing keeps the measure to the load. */
const silentLog: EventLog = {
  publish: async () => undefined,
  consume: async () => ({ close: async () => undefined }),
  follow: async () => ({ close: async () => undefined }),
  deleteGroup: async () => undefined,
  close: async () => undefined,
};

const main = async (): Promise<void> => {
  const db = URL ? createPostgresDatabase({ url: URL }) : await createEmbeddedDatabase();
  const schema = `catalog_bench_${process.pid}`;
  try {
    await migrate(db, schema, catalogMigrations);
    let start = performance.now();
    await fill(db, schema);
    console.log(
      `${db.engine}: filled ${SIZE} products in ${((performance.now() - start) / 1000).toFixed(1)} s`,
    );
    const logger = createLogger({ service: 'bench', level: 'silent' });
    const index = createEmbeddedSearchIndex<CatalogProduct>();
    start = performance.now();
    const projection = await startSearchProjection({ db, log: silentLog, schema, index, logger });
    const seconds = (performance.now() - start) / 1000;
    console.log(
      `${db.engine}: index loaded from the table in ${seconds.toFixed(1)} s (${await index.count()} documents)`,
    );
    await projection.stop();

    const embedder = await loadLocalEmbedder({
      cacheDir: join(process.env.DATA_DIR ?? 'data', 'embeddings'),
    });
    for (const run of ['first start (embeds and stores)', 'restart (stored embeddings)']) {
      const lexical = createWorkerSearchIndex<CatalogProduct>();
      const vectors = createHnswVectorIndex<CatalogProduct>({ dimensions: 100 });
      const semantic = createSemanticIndexer({ db, schema, embedder, vectors, logger });
      start = performance.now();
      const both = await startSearchProjection({
        db,
        log: silentLog,
        schema,
        index: lexical,
        semantic,
        logger,
      });
      const loaded = (performance.now() - start) / 1000;
      console.log(
        `${db.engine}: ${run}: both indexes loaded in ${loaded.toFixed(1)} s ` +
          `(${await lexical.count()} documents, ${await vectors.count()} public vectors)`,
      );
      await both.stop();
      await lexical.close();
    }
  } finally {
    await db.query(`drop schema if exists ${quoteIdent(schema)} cascade`);
    await db.close();
  }
};

await main();
