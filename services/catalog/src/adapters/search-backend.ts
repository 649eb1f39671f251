import { connectElasticsearchSearchIndex, createWorkerSearchIndex } from '@marketplace/search';
import type { SearchIndex } from '@marketplace/search';
import type { CatalogProduct } from '../domain/catalog-product.js';

/**
 * Where the catalog's search index lives: `embedded` (the in-memory index of `@marketplace/search` in a worker
 * thread of this process, rebuilt from the products table at start; one catalog replica) or `elasticsearch`
 * (shared by every replica; the start-up load re-sends the table, which the external versions make idempotent).
 */
export type SearchBackend =
  | { readonly kind: 'embedded' }
  | { readonly kind: 'elasticsearch'; readonly url: string; readonly alias: string };

export interface OpenedSearchIndex {
  readonly index: SearchIndex<CatalogProduct>;
  /**
   * False once the embedded index's worker thread died: the catalog then reports itself not ready. A remote
   * index has no such state (each failing call fails on its own).
   */
  isAlive(): boolean;
  /** Ends the worker thread or the connection. */
  close(): Promise<void>;
}

export const openSearchIndex = async (backend: SearchBackend): Promise<OpenedSearchIndex> => {
  if (backend.kind === 'elasticsearch') {
    const index = await connectElasticsearchSearchIndex<CatalogProduct>({
      url: backend.url,
      alias: backend.alias,
    });
    return { index, isAlive: () => true, close: () => index.close() };
  }
  const index = createWorkerSearchIndex<CatalogProduct>();
  return { index, isAlive: () => index.isAlive(), close: () => index.close() };
};
