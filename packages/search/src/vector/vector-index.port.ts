import type { SearchDocument, SearchFilters, WriteOutcome } from '../search-index.port.js';

export interface VectorQuery {
  /** Unit length, from the same embedder as the indexed vectors. */
  readonly vector: Float32Array;
  /** Applied to the nearest candidates, as the specification's semantic search says. */
  readonly filters: SearchFilters;
  readonly limit: number;
}

export interface VectorHit<P = unknown> {
  readonly id: string;
  /** Cosine similarity clamped to [0, 1]: 1 is the same direction, 0 unrelated or opposite. */
  readonly similarity: number;
  readonly document: SearchDocument<P>;
}

/**
 * Nearest-neighbour search over document vectors, with the same documents, versions and filters as the
 * lexical `SearchIndex`: the catalog hands both the same `SearchDocument`, so a hit answers without a lookup.
 */
export interface VectorIndex<P = unknown> {
  /** Adds or replaces the document's vector unless this version of it, or a newer one, is already held. */
  upsert(document: SearchDocument<P>, vector: Float32Array): Promise<WriteOutcome>;
  /** The same, in order; loads use it, yielding to the event loop between batches. */
  upsertMany(entries: readonly VectorEntry<P>[]): Promise<WriteOutcome[]>;
  /** Removes as of `version`; a later upsert with that version or older is `stale`. */
  remove(id: string, version: number): Promise<WriteOutcome>;
  /** Up to `limit` hits passing the filters, most similar first (ties by id); none with similarity 0. */
  search(query: VectorQuery): Promise<VectorHit<P>[]>;
  count(): Promise<number>;
  clear(): Promise<void>;
}

export interface VectorEntry<P = unknown> {
  readonly document: SearchDocument<P>;
  readonly vector: Float32Array;
}
