import { performance } from 'node:perf_hooks';
import type { Embedder } from '@marketplace/embeddings';
import {
  SEMANTIC_SEARCH_FEEDBACK,
  type HnswVectorIndexOptions,
  type SearchDocument,
} from '@marketplace/search';
import { CONDITIONS } from '@marketplace/vocabulary';
import { summarize, type Summary } from '../stats.js';
import { GOODS_KINDS, LIQUIDATION_NOTES, LOT_PREFIXES, LOT_SIZES } from './labelled-catalog.js';
import { buildVectorIndex, loadBenchEmbedder } from './vector-index.js';

/** What a generated listing is, so a hit can be judged: the kind the queries are labelled with. */
export interface LabelledPayload {
  readonly kind: string;
}

/**
 * `count` listings spread evenly over the goods kinds, titled as liquidation sellers title lots ("Pallet of 40
 * Dell Latitude 5490 laptops"). Deterministic: listing i takes its parts by fixed strides of i, so every run and
 * every machine measures the same catalog.
 */
export const labelledListings = (count: number): SearchDocument<LabelledPayload>[] =>
  Array.from({ length: count }, (_, i) => {
    const goods = GOODS_KINDS[i % GOODS_KINDS.length]!;
    const round = Math.floor(i / GOODS_KINDS.length);
    const pick = <T>(values: readonly T[], stride: number): T =>
      values[(round * stride + i) % values.length]!;
    return {
      id: `product_${i + 1}`,
      version: 1,
      title: `${pick(LOT_PREFIXES, 7)} ${pick(LOT_SIZES, 5)} ${pick(goods.modifiers, 3)} ${pick(goods.nouns, 1)}`,
      // A manifest number per lot, as sellers write them: no two listings have the same text.
      description: `${goods.detail}; ${pick(LIQUIDATION_NOTES, 11)}, manifest ${48_000 + i}`,
      category: goods.category,
      condition: pick(CONDITIONS, 13),
      priceCents: 500 + ((i * 7_919) % 200_000),
      public: true,
      createdAtMs: Date.UTC(2026, 0, 1) + i * 1_000,
      payload: { kind: goods.kind },
    };
  });

export interface SemanticSearchFigures {
  readonly listings: number;
  readonly queries: number;
  /** Mean over the labelled queries of the share of the top 10 that is of the intended kind. */
  readonly recallAt10: number;
  /** The queries whose top 10 held fewer than 8 of the intended kind, with the first 3 hits. */
  readonly weakQueries: readonly { query: string; recall: number; got: string[] }[];
  /** Mean share of the exact top 10 (by brute force, ties included) that the HNSW index returned. */
  readonly annRecallAt10: number;
  readonly embedListingsMs: number;
  readonly indexBuildMs: number;
  /** One query as the catalog runs it: embedding the text, then the index search with feedback (top 10, no filter), in process. */
  readonly queryLatencyMs: Summary;
  /** The same with a category and a maximum price filter. */
  readonly filteredQueryLatencyMs: Summary;
}

const TOP = 10;

/**
 * Embeds a labelled catalog of `listings`, indexes it, and measures what the bars name: recall@10 of the
 * intended listings over the labelled queries, the approximate index's recall@10 against exact search, and the
 * latency of a semantic query with its embedding.
 */
export const measureSemanticSearch = async (
  embedder: Embedder,
  options: {
    readonly listings: number;
    readonly latencyRounds: number;
    /** Graph parameters other than the index's defaults, to measure them. */
    readonly graph?: Omit<HnswVectorIndexOptions, 'dimensions'>;
  },
): Promise<SemanticSearchFigures> => {
  const documents = labelledListings(options.listings);
  const { index, vectors, embedMs, buildMs } = await buildVectorIndex(embedder, documents, options.graph);

  const queries = GOODS_KINDS.map((goods) => goods.query);
  const queryVectors = await embedder.embed(queries);
  const everything = { visibility: 'public' } as const;
  let recallSum = 0;
  let annRecallSum = 0;
  const weakQueries: { query: string; recall: number; got: string[] }[] = [];
  for (const [q, goods] of GOODS_KINDS.entries()) {
    // As the catalog's semantic search asks (services/catalog semantic-search.query.ts).
    const hits = await index.search({
      vector: queryVectors[q]!,
      filters: everything,
      limit: TOP,
      feedback: SEMANTIC_SEARCH_FEEDBACK,
    });
    const recall = hits.filter((hit) => hit.document.payload.kind === goods.kind).length / TOP;
    recallSum += recall;
    if (recall < 0.8)
      weakQueries.push({
        query: goods.query,
        recall,
        got: hits.slice(0, 3).map((hit) => hit.document.title),
      });
    // The graph's own recall, of the query as given (feedback re-scores what the graph found).
    // Listings of a kind differ little; any hit as similar as the exact 10th (ties included) counts as found.
    const graphHits = await index.search({ vector: queryVectors[q]!, filters: everything, limit: TOP });
    const tenthExact = exactSimilarities(queryVectors[q]!, vectors)[TOP - 1] ?? 0;
    annRecallSum +=
      Math.min(TOP, graphHits.filter((hit) => hit.similarity >= tenthExact - 1e-5).length) / TOP;
  }

  const latency = async (filtered: boolean): Promise<Summary> => {
    const samples: number[] = [];
    for (let round = 0; round < options.latencyRounds; round++) {
      for (const goods of GOODS_KINDS) {
        const begin = performance.now();
        const [vector] = await embedder.embed([goods.query]);
        await index.search({
          vector: vector!,
          filters: filtered ? { ...everything, category: goods.category, maxPriceCents: 50_000 } : everything,
          limit: TOP,
          feedback: SEMANTIC_SEARCH_FEEDBACK,
        });
        samples.push(performance.now() - begin);
      }
    }
    return summarize(samples);
  };

  return {
    listings: documents.length,
    queries: queries.length,
    recallAt10: round3(recallSum / queries.length),
    weakQueries,
    annRecallAt10: round3(annRecallSum / queries.length),
    embedListingsMs: Math.round(embedMs),
    indexBuildMs: Math.round(buildMs),
    queryLatencyMs: await latency(false),
    filteredQueryLatencyMs: await latency(true),
  };
};

/** Similarities of `query` to every vector, highest first (exact search by brute force). */
const exactSimilarities = (query: Float32Array, vectors: readonly Float32Array[]): number[] =>
  vectors
    .map((vector) => {
      let dot = 0;
      for (let d = 0; d < vector.length; d++) dot += vector[d]! * query[d]!;
      return dot;
    })
    .sort((a, b) => b - a);

const round3 = (value: number): number => Math.round(value * 1_000) / 1_000;

/**
 * The `semantic-search.local` scenario: the local embedder (its table cached under DATA_DIR/embeddings, as
 * `pnpm start` caches it) over 100,100 labelled listings, 5 latency rounds of the 55 queries.
 */
export const semanticSearchLocal = async (): Promise<SemanticSearchFigures & { embedderLoadMs: number }> => {
  const started = performance.now();
  const embedder = await loadBenchEmbedder();
  const embedderLoadMs = Math.round(performance.now() - started);
  return {
    embedderLoadMs,
    ...(await measureSemanticSearch(embedder, { listings: 100_100, latencyRounds: 5 })),
  };
};
