import type { Database } from '@marketplace/database';
import { createPostgresDatabase } from '@marketplace/database';
import { createWorkerSearchIndex } from '@marketplace/search';
import type { SearchIndex } from '@marketplace/search';
import { measureLayer, rawHttpLayer, ratioToLimit, sampleAnswer } from '../same-run-limit.js';
import { buildVectorIndex, loadBenchEmbedder } from '../semantic/vector-index.js';
import {
  benchQueries,
  generateListings,
  searchDocumentOf,
  semanticBenchQueries,
} from './generated-listings.js';
import type { GeneratedListing } from './generated-listings.js';
import { httpGetter, httpPoster } from './load.js';
import type { LayerOptions } from '../same-run-limit.js';
import type { BenchMode, RunningMarketplace } from '../marketplace.js';
import { withMarketplace } from '../marketplace.js';

export interface CatalogSearchOptions extends LayerOptions {
  readonly listings: number;
}

const QUERY_COUNT = 1_000;
const PAGE = 20;
const SEMANTIC_PATH = '/api/ucp/catalog/search';
/** The API's default page of semantic matches. */
const SEMANTIC_LIMIT = 10;

const pathOf = ({ q, category, condition }: ReturnType<typeof benchQueries>[number]): string => {
  const params = new URLSearchParams({ limit: String(PAGE) });
  if (q !== undefined) params.set('q', q);
  if (category !== undefined) params.set('category', category);
  if (condition !== undefined) params.set('condition', condition);
  return `/api/ucp/catalog/products?${params.toString()}`;
};

/**
 * Writes the generated listings into the catalog's read model, as its projection would have; the same SQL on
 * PostgreSQL and PGlite.
 */
const seedCatalog = async (db: Database, listings: readonly GeneratedListing[]): Promise<void> => {
  for (let start = 0; start < listings.length; start += 2_000) {
    const rows = listings.slice(start, start + 2_000).map((listing) => ({
      product_id: listing.id,
      version: listing.version,
      created_at_ms: listing.createdAtMs,
      document: listing,
    }));
    await db.query(
      `insert into catalog.products (product_id, version, created_at_ms, document)
       select product_id, version, created_at_ms, document
       from jsonb_to_recordset($1::jsonb) as r(product_id text, version bigint, created_at_ms bigint, document jsonb)`,
      [JSON.stringify(rows)],
    );
  }
};

/**
 * The catalog's stored listing embeddings: the ones it computed (or found) while loading its vector index. Read
 * in cluster mode only: the embedded PostgreSQL is inside the running process.
 */
const countStoredEmbeddings = async (databaseUrl: string): Promise<number> => {
  const db = createPostgresDatabase({ url: databaseUrl, applicationName: 'bench' });
  try {
    const { rows } = await db.query<{ count: string }>('select count(*) from catalog.product_embeddings');
    return Number(rows[0]?.count ?? 0);
  } finally {
    await db.close();
  }
};

/**
 * Writes the listings into the catalog's read model with the catalog stopped, then restarts it: at start it
 * loads both indexes from the table, embedding every public listing that has no stored embedding (as after a
 * rebuild), so the seeded rows are searchable lexically and semantically.
 */
const reloadCatalog = async (marketplace: RunningMarketplace, listings: readonly GeneratedListing[]) => {
  let seeded = 0;
  const seedMs = await marketplace.withCatalogStopped(async (db) => {
    const seedStart = performance.now();
    await seedCatalog(db, listings);
    seeded = performance.now();
    return seeded - seedStart;
  });
  return {
    seedMs: Math.round(seedMs),
    catalogReadyAfterRestartMs: Math.round(performance.now() - seeded),
    publicListings: listings.filter((listing) => listing.promotePublicly).length,
    ...(marketplace.databaseUrl === undefined
      ? {}
      : { embeddingsStoredByCatalog: await countStoredEmbeddings(marketplace.databaseUrl) }),
  };
};

/** The gateway of a marketplace whose catalog holds the listings, and the load to put on each layer. */
interface SearchRun {
  readonly baseUrl: string;
  readonly listings: readonly GeneratedListing[];
  readonly options: CatalogSearchOptions;
}

/** GET /api/ucp/catalog/products through the gateway, then the lexical index alone, then raw node:http. */
const measureLexical = async ({ baseUrl, listings, options }: SearchRun) => {
  const queries = benchQueries(QUERY_COUNT);
  const paths = queries.map(pathOf);
  const gateway = await measureLayer(httpGetter(baseUrl, paths, options.concurrency), options);
  const sampleBody = await sampleAnswer(baseUrl, { path: paths[0]! });

  const index: SearchIndex<GeneratedListing> & { close(): Promise<void> } = createWorkerSearchIndex();
  await index.upsertMany(listings.map(searchDocumentOf));
  const indexAlone = await measureLayer(async (n) => {
    const { q, category, condition } = queries[n % queries.length]!;
    await index.search({
      text: q,
      filters: { visibility: 'public', category, condition },
      limit: PAGE,
      offset: 0,
    });
  }, options);
  await index.close();

  const rawHttp = await rawHttpLayer(
    sampleBody,
    (baseUrl) => httpGetter(baseUrl, ['/'], options.concurrency),
    options,
  );
  return {
    responseBytes: Buffer.byteLength(sampleBody),
    gateway,
    indexAlone,
    rawHttp,
    ratioToRawHttp: ratioToLimit(gateway, rawHttp),
  };
};

/**
 * POST /api/ucp/catalog/search through the gateway, then the same queries against the vector index alone (the
 * same embedder and HNSW index as the catalog, over the same listings, in this process: query embedding and
 * search timed together), then raw node:http answering the same POSTs with a same-sized JSON.
 */
const measureSemantic = async ({ baseUrl, listings, options }: SearchRun) => {
  const queries = semanticBenchQueries(QUERY_COUNT);
  const bodies = queries.map((query) => JSON.stringify({ ...query, limit: SEMANTIC_LIMIT }));
  const post = (baseUrl: string) => httpPoster(baseUrl, SEMANTIC_PATH, bodies, options.concurrency);
  const gateway = await measureLayer(post(baseUrl), options);
  const sampleBody = await sampleAnswer(baseUrl, {
    method: 'POST',
    path: SEMANTIC_PATH,
    headers: { 'content-type': 'application/json' },
    body: bodies[0]!,
  });

  const embedder = await loadBenchEmbedder();
  const vectors = await buildVectorIndex(embedder, listings.map(searchDocumentOf));
  const indexAlone = await measureLayer(async (n) => {
    const { query, category, max_price } = queries[n % queries.length]!;
    const [vector] = await embedder.embed([query]);
    await vectors.index.search({
      vector: vector!,
      filters: { visibility: 'public', category, maxPriceCents: max_price },
      limit: SEMANTIC_LIMIT,
    });
  }, options);
  await vectors.index.clear();

  const rawHttp = await rawHttpLayer(sampleBody, post, options);
  return {
    responseBytes: Buffer.byteLength(sampleBody),
    gateway,
    indexAlone: {
      embedListingsMs: Math.round(vectors.embedMs),
      indexBuildMs: Math.round(vectors.buildMs),
      ...indexAlone,
    },
    rawHttp,
    ratioToRawHttp: ratioToLimit(gateway, rawHttp),
  };
};

/**
 * Search at catalog scale in `mode`: N generated listings in the catalog's read model, the catalog restarted to
 * load them (lexical index in a worker thread, vector index of their embeddings), then for lexical and then
 * semantic search: through the gateway the saturation throughput and the latencies at half that rate, and the
 * same queries against the index alone (in this process) and raw node:http serving a same-sized JSON, from the
 * same run.
 */
export const catalogSearch = (mode: BenchMode, options: CatalogSearchOptions) => {
  const listings = generateListings(options.listings);
  return withMarketplace(mode, {}, async (marketplace) => {
    const reloaded = await reloadCatalog(marketplace, listings);
    const run = { baseUrl: marketplace.client.baseUrl, listings, options };
    const lexical = await measureLexical(run);
    const semantic = await measureSemantic(run);
    return { ...options, ...reloaded, ...lexical, semantic };
  });
};
