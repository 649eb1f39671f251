import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadLocalEmbedder, type Embedder } from '@marketplace/embeddings';
import {
  createHnswVectorIndex,
  embeddingTextOf,
  type HnswVectorIndexOptions,
  type SearchDocument,
  type VectorIndex,
} from '@marketplace/search';

const EMBED_BATCH = 1_000;

/**
 * The local embedder, its table cached under DATA_DIR/embeddings: where `pnpm start` and the cluster's catalog
 * (started with the repository as working directory) cache it, so the bench embeds in the catalog's space.
 */
export const loadBenchEmbedder = (): Promise<Embedder> =>
  loadLocalEmbedder({ cacheDir: join(process.env.DATA_DIR ?? 'data', 'embeddings') });

export interface BuiltVectorIndex<P> {
  readonly index: VectorIndex<P>;
  /** The documents' vectors, in their order. */
  readonly vectors: readonly Float32Array[];
  readonly embedMs: number;
  readonly buildMs: number;
}

/** Embeds the documents' text as the catalog does (`embeddingTextOf`), in batches, then builds their HNSW index. */
export const buildVectorIndex = async <P>(
  embedder: Embedder,
  documents: readonly SearchDocument<P>[],
  /** Graph parameters other than the index's defaults, to measure them. */
  graph?: Omit<HnswVectorIndexOptions, 'dimensions'>,
): Promise<BuiltVectorIndex<P>> => {
  let started = performance.now();
  const vectors: Float32Array[] = [];
  for (let start = 0; start < documents.length; start += EMBED_BATCH) {
    const batch = documents.slice(start, start + EMBED_BATCH);
    vectors.push(...(await embedder.embed(batch.map(embeddingTextOf))));
  }
  const embedMs = performance.now() - started;

  const index = createHnswVectorIndex<P>({ ...graph, dimensions: vectors[0]!.length });
  started = performance.now();
  await index.upsertMany(documents.map((document, i) => ({ document, vector: vectors[i]! })));
  return { index, vectors, embedMs, buildMs: performance.now() - started };
};
