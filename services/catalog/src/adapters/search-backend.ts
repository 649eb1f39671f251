import { createHash } from 'node:crypto';
import type { Embedder } from '@marketplace/embeddings';
import { connectElasticsearch, createHnswVectorIndex, createWorkerSearchIndex } from '@marketplace/search';
import type { SearchIndex } from '@marketplace/search';
import type { SemanticSearchBackend } from '../application/semantic-search.query.js';
import type { CatalogProduct } from '../domain/catalog-product.js';

/**
 * Where the catalog's search indexes live: `embedded` (the lexical index of `@marketplace/search` in a worker
 * thread and the HNSW vector index in this process, both rebuilt from the products table at start) or
 * `elasticsearch` (both in the cluster, shared by every replica: the text index behind `alias`, the vectors
 * behind `vectorAliasOf(alias, space)`; the start-up load re-sends the table, which external versions make
 * idempotent).
 */
export type SearchBackend =
  | { readonly kind: 'embedded' }
  | { readonly kind: 'elasticsearch'; readonly url: string; readonly alias: string };

export interface OpenedSearchIndex {
  readonly index: SearchIndex<CatalogProduct>;
  /** Semantic search's embedder and vector index; absent without an embedder. */
  readonly semantic?: SemanticSearchBackend;
  /**
   * False once the embedded index's worker thread died: the catalog then reports itself not ready. A remote
   * index has no such state (each failing call fails on its own).
   */
  isAlive(): boolean;
  /** Ends the worker thread or the connection. */
  close(): Promise<void>;
}

/**
 * The vectors of each embedding space have an index of their own: a new model (another `space`) starts an empty
 * one, which the start-up load fills, instead of meeting the old model's vectors under the same versions.
 */
export const vectorAliasOf = (alias: string, space: string): string =>
  `${alias}_vectors_${createHash('sha256').update(space).digest('hex').slice(0, 12)}`;

export const openSearchIndex = async (
  backend: SearchBackend,
  embedder?: Embedder,
): Promise<OpenedSearchIndex> => {
  // The vector index is sized by the embedder's dimensions, which one embedding tells.
  const dimensions = embedder && (await embedder.embed(['dimensions']))[0]!.length;
  if (backend.kind === 'elasticsearch') {
    const connected = await connectElasticsearch<CatalogProduct>({
      url: backend.url,
      alias: backend.alias,
      ...(embedder && dimensions
        ? { vectors: { alias: vectorAliasOf(backend.alias, embedder.space), dimensions } }
        : {}),
    });
    return {
      index: connected.text,
      ...(embedder && connected.vectors ? { semantic: { embedder, vectors: connected.vectors } } : {}),
      isAlive: () => true,
      close: () => connected.close(),
    };
  }
  const index = createWorkerSearchIndex<CatalogProduct>();
  return {
    index,
    ...(embedder && dimensions
      ? { semantic: { embedder, vectors: createHnswVectorIndex<CatalogProduct>({ dimensions }) } }
      : {}),
    isAlive: () => index.isAlive(),
    close: () => index.close(),
  };
};
