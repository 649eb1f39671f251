import { SEMANTIC_SEARCH_FEEDBACK, createWorkerSearchIndex } from '@marketplace/search';
import { measureLayer } from '../same-run-limit.js';
import type { LayerOptions } from '../same-run-limit.js';
import { buildVectorIndex, loadBenchEmbedder } from '../semantic/vector-index.js';
import {
  benchQueries,
  generateListings,
  searchDocumentOf,
  semanticBenchQueries,
} from './generated-listings.js';

/**
 * The "index alone" layers of `catalog-search`, each in a process of its own (forked by `measureIndexAlone`):
 * the same generated listings (the generator is deterministic, so they are the ones the catalog holds) and the
 * same queries as through the gateway, without HTTP, gRPC or the catalog. Its own process, so the bench
 * process's heap does not pause it, and the layer's figures are the index's as the catalog runs it.
 */
export interface IndexAloneJob {
  readonly kind: 'lexical' | 'semantic';
  readonly listings: number;
  readonly queries: number;
  readonly page: number;
  readonly options: LayerOptions;
}

/** Lexical: the catalog's worker-thread index; this thread only sends the queries. */
const lexical = async ({ listings, queries: count, page, options }: IndexAloneJob) => {
  const index = createWorkerSearchIndex();
  await index.upsertMany(generateListings(listings).map(searchDocumentOf));
  const queries = benchQueries(count);
  try {
    return await measureLayer(async (n) => {
      const { q, category, condition } = queries[n % queries.length]!;
      await index.search({
        text: q,
        filters: { visibility: 'public', category, condition },
        limit: page,
        offset: 0,
      });
    }, options);
  } finally {
    await index.close();
  }
};

/**
 * Semantic: the local embedder and the HNSW index on this thread, with the catalog's relevance feedback, as in
 * the catalog; embedding timed with search.
 */
const semantic = async ({ listings, queries: count, page, options }: IndexAloneJob) => {
  const embedder = await loadBenchEmbedder();
  const vectors = await buildVectorIndex(embedder, generateListings(listings).map(searchDocumentOf));
  const queries = semanticBenchQueries(count);
  const figures = await measureLayer(async (n) => {
    const { query, category, max_price } = queries[n % queries.length]!;
    const [vector] = await embedder.embed([query]);
    await vectors.index.search({
      vector: vector!,
      filters: { visibility: 'public', category, maxPriceCents: max_price },
      limit: page,
      feedback: SEMANTIC_SEARCH_FEEDBACK,
    });
  }, options);
  return {
    embedListingsMs: Math.round(vectors.embedMs),
    indexBuildMs: Math.round(vectors.buildMs),
    ...figures,
  };
};

process.once('message', (job: IndexAloneJob) => {
  void (job.kind === 'lexical' ? lexical(job) : semantic(job)).then(
    (figures) => process.send?.(figures, () => process.exit(0)),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    },
  );
});
