import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Cluster } from '@marketplace/e2e';
import { createWorkerSearchIndex } from '@marketplace/search';
import type { SearchIndex } from '@marketplace/search';
import { summarize } from '../stats.js';
import { benchQueries, generateListings, searchDocumentOf } from './generated-listings.js';
import type { GeneratedListing } from './generated-listings.js';
import { closedLoop, httpGetter, openLoop } from './load.js';
import type { LoadFigures, Send } from './load.js';

export interface CatalogSearchOptions {
  readonly listings: number;
  /** Callers of the saturation run. */
  readonly concurrency: number;
  /** Length of each load run. */
  readonly durationMs: number;
}

const QUERY_COUNT = 1_000;
const PAGE = 20;

/** Saturation throughput, then latencies at half that rate: one layer's figures. */
const measureLayer = async (send: Send, options: CatalogSearchOptions) => {
  for (let n = 0; n < 200; n++) await send(n); // warm-up: JIT, connections, caches
  const saturation = await closedLoop(send, options.concurrency, options.durationMs);
  const halfRate = Math.max(1, Math.floor(saturation.perSecond / 2));
  const atHalf = await openLoop(send, halfRate, options.durationMs);
  const figures = (run: LoadFigures) => ({
    requests: run.requests,
    errors: run.errors,
    perSecond: run.perSecond,
    latencyMs: summarize(run.latenciesMs),
  });
  return { saturation: figures(saturation), halfRate, atHalfRate: figures(atHalf) };
};

const pathOf = ({ q, category, condition }: ReturnType<typeof benchQueries>[number]): string => {
  const params = new URLSearchParams({ limit: String(PAGE) });
  if (q !== undefined) params.set('q', q);
  if (category !== undefined) params.set('category', category);
  if (condition !== undefined) params.set('condition', condition);
  return `/api/ucp/catalog/products?${params.toString()}`;
};

/** Writes the generated listings into the catalog's read model, as its projection would have. */
const seedCatalog = async (databaseUrl: string, listings: readonly GeneratedListing[]): Promise<void> => {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    for (let start = 0; start < listings.length; start += 2_000) {
      const rows = listings.slice(start, start + 2_000).map((listing) => ({
        product_id: listing.id,
        version: listing.version,
        created_at_ms: listing.createdAtMs,
        document: listing,
      }));
      await client.query(
        `insert into catalog.products (product_id, version, created_at_ms, document)
         select product_id, version, created_at_ms, document
         from jsonb_to_recordset($1::jsonb) as r(product_id text, version bigint, created_at_ms bigint, document jsonb)`,
        [JSON.stringify(rows)],
      );
    }
  } finally {
    await client.end();
  }
};

const rawJsonServer = async (body: string): Promise<{ baseUrl: string; stop(): void }> => {
  const child = fork(fileURLToPath(new URL('./raw-json-server.js', import.meta.url)), [body], {
    stdio: 'ignore',
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('raw server did not start in 10 s')), 10_000);
    child.once('message', (message: { port: number }) => {
      clearTimeout(timer);
      resolve(message.port);
    });
  });
  return { baseUrl: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
};

/**
 * Lexical search at catalog scale in cluster mode: N generated listings in the catalog's read model, the
 * catalog restarted to load them (its index in a worker thread), then through the gateway the saturation
 * throughput and the latencies at half that rate; the same queries against the index alone (in this process,
 * worker thread) and raw node:http serving a same-sized JSON, from the same run.
 */
export const catalogSearchCluster = async (options: CatalogSearchOptions) => {
  const listings = generateListings(options.listings);
  const queries = benchQueries(QUERY_COUNT);
  const cluster = await Cluster.start();
  try {
    const catalog = cluster.process('catalog');
    await catalog.stop('SIGTERM');
    const seedStart = performance.now();
    await seedCatalog(cluster.databaseUrl, listings);
    const seedMs = performance.now() - seedStart;
    const loadStart = performance.now();
    catalog.start();
    await cluster.waitUntilReady();
    const catalogReadyMs = performance.now() - loadStart;

    const paths = queries.map(pathOf);
    const gateway = await measureLayer(
      httpGetter(cluster.client.baseUrl, paths, options.concurrency),
      options,
    );
    const sampleBody = await (await fetch(new URL(paths[0]!, cluster.client.baseUrl))).text();

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

    const raw = await rawJsonServer(sampleBody);
    try {
      const rawHttp = await measureLayer(httpGetter(raw.baseUrl, ['/'], options.concurrency), options);
      return {
        ...options,
        seedMs: Math.round(seedMs),
        catalogReadyAfterRestartMs: Math.round(catalogReadyMs),
        responseBytes: Buffer.byteLength(sampleBody),
        gateway,
        indexAlone,
        rawHttp,
      };
    } finally {
      raw.stop();
    }
  } finally {
    await cluster.stop();
  }
};
