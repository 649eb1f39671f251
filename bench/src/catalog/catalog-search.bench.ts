import type { Database } from '@marketplace/database';
import { createPostgresDatabase } from '@marketplace/database';
import {
  forkedResult,
  measureHttpLayer,
  ratioToLimit,
  sampleAnswer,
  withRawJsonServer,
} from '../same-run-limit.js';
import type { HttpLoad, LayerFigures, LayerOptions } from '../same-run-limit.js';
import { benchQueries, generateListings, semanticBenchQueries } from './generated-listings.js';
import type { GeneratedListing } from './generated-listings.js';
import type { IndexAloneJob } from './index-alone.js';
import { getRequests, postRequests } from './load.js';
import type { HttpRequest } from './load.js';
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
  readonly options: CatalogSearchOptions;
}

/** Building an index of 100,000 listings takes seconds on a quiet machine, minutes on a loaded one. */
const INDEX_ALONE_TIMEOUT_MS = 600_000;

/** The index alone, in a process of its own (`index-alone.ts`), over the same generated listings and queries. */
const measureIndexAlone = async <T>(job: IndexAloneJob): Promise<T> =>
  (await forkedResult<T>('./catalog/index-alone.js', [], INDEX_ALONE_TIMEOUT_MS, job)).result;

/**
 * The same requests through the gateway, then against raw node:http serving a same-sized answer: each from a load
 * generator in its own process.
 */
const measureHttp = async (baseUrl: string, requests: readonly HttpRequest[], options: LayerOptions) => {
  const gateway = await measureHttpLayer({ baseUrl, requests }, options);
  const sampleBody = await sampleAnswer(baseUrl, requests[0]!);
  const rawHttp = await withRawJsonServer(sampleBody, (rawBaseUrl) =>
    measureHttpLayer({ baseUrl: rawBaseUrl, requests } satisfies HttpLoad, options),
  );
  return { responseBytes: Buffer.byteLength(sampleBody), gateway, rawHttp };
};

/** GET /api/ucp/catalog/products through the gateway, then the lexical index alone, then raw node:http. */
const measureLexical = async ({ baseUrl, options }: SearchRun) => {
  const requests = getRequests(benchQueries(QUERY_COUNT).map(pathOf));
  const { responseBytes, gateway, rawHttp } = await measureHttp(baseUrl, requests, options);
  const indexAlone = await measureIndexAlone<LayerFigures>({
    kind: 'lexical',
    listings: options.listings,
    queries: QUERY_COUNT,
    page: PAGE,
    options,
  });
  return { responseBytes, gateway, indexAlone, rawHttp, ratioToRawHttp: ratioToLimit(gateway, rawHttp) };
};

/**
 * POST /api/ucp/catalog/search through the gateway, then the same queries against the vector index alone (the
 * same embedder and HNSW index as the catalog, over the same listings: query embedding and search timed
 * together), then raw node:http answering the same POSTs with a same-sized JSON.
 */
const measureSemantic = async ({ baseUrl, options }: SearchRun) => {
  const bodies = semanticBenchQueries(QUERY_COUNT).map((query) =>
    JSON.stringify({ ...query, limit: SEMANTIC_LIMIT }),
  );
  const requests = postRequests(SEMANTIC_PATH, bodies);
  const { responseBytes, gateway, rawHttp } = await measureHttp(baseUrl, requests, options);
  const indexAlone = await measureIndexAlone<
    LayerFigures & { embedListingsMs: number; indexBuildMs: number }
  >({
    kind: 'semantic',
    listings: options.listings,
    queries: QUERY_COUNT,
    page: SEMANTIC_LIMIT,
    options,
  });
  return { responseBytes, gateway, indexAlone, rawHttp, ratioToRawHttp: ratioToLimit(gateway, rawHttp) };
};

/**
 * Search at catalog scale in `mode`: N generated listings in the catalog's read model, the catalog restarted to
 * load them (lexical index in a worker thread, vector index of their embeddings), then for lexical and then
 * semantic search: through the gateway the saturation throughput and the latencies at half that rate, and the
 * same queries against the index alone and raw node:http serving a same-sized JSON, from the same run; every
 * layer's load from a process of its own (the bench process holds the listings).
 */
export const catalogSearch = (mode: BenchMode, options: CatalogSearchOptions) => {
  const listings = generateListings(options.listings);
  return withMarketplace(mode, {}, async (marketplace) => {
    const reloaded = await reloadCatalog(marketplace, listings);
    const run = { baseUrl: marketplace.client.baseUrl, options };
    const lexical = await measureLexical(run);
    const semantic = await measureSemantic(run);
    return { ...options, ...reloaded, ...lexical, semantic };
  });
};
