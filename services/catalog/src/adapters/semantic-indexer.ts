import { createHash } from 'node:crypto';
import type { Database } from '@marketplace/database';
import type { Logger } from '@marketplace/platform';
import type { Embedder } from '@marketplace/embeddings';
import type { VectorIndex } from '@marketplace/search';
import { embeddingTextOf } from '@marketplace/search';
import { toSearchDocument } from '../application/product-search-document.js';
import type { CatalogProduct } from '../domain/catalog-product.js';
import { isPublic } from '../domain/product-visibility.js';
import type { StoredEmbedding } from './product-embeddings.table.js';
import { productEmbeddingsTable } from './product-embeddings.table.js';

/** Keeps the vector index in step with committed products; the projection calls it, never a request. */
export interface SemanticIndexer {
  /**
   * Public products go into the vector index with their embedding (the stored one when it was computed from the
   * same text in the same space, else a fresh one, stored for next time); others are removed from it. Versioned
   * like the lexical index, so a repeat or an older product changes nothing.
   */
  index(products: readonly CatalogProduct[]): Promise<void>;
  /** Empties the vector index (a rebuild); stored embeddings stay, keyed by their text. */
  clear(): Promise<void>;
}

export interface SemanticIndexerOptions {
  readonly db: Database;
  readonly schema: string;
  readonly embedder: Embedder;
  readonly vectors: VectorIndex<CatalogProduct>;
  readonly logger: Logger;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export const createSemanticIndexer = ({
  db,
  schema,
  embedder,
  vectors,
  logger,
}: SemanticIndexerOptions): SemanticIndexer => {
  const embeddings = productEmbeddingsTable(schema);
  /**
   * Public products whose embedding failed (a remote provider down): retried with the next products indexed,
   * and embedded at the next start anyway. Meanwhile they are missing from semantic search only: the lexical
   * projection does not wait for the provider.
   */
  const unembedded = new Map<string, CatalogProduct>();

  const vectorsOf = async (products: readonly CatalogProduct[]): Promise<Float32Array[]> => {
    const stored = await embeddings.findMany(
      db,
      products.map((product) => product.id),
    );
    const texts = products.map(embeddingTextOf);
    const hashes = texts.map(sha256);
    const result: (Float32Array | undefined)[] = products.map((product, i) => {
      const known = stored.get(product.id);
      return known?.space === embedder.space && known.textSha256 === hashes[i] ? known.vector : undefined;
    });
    const missing = result.flatMap((vector, i) => (vector === undefined ? [i] : []));
    if (missing.length > 0) {
      const fresh = await embedder.embed(missing.map((i) => texts[i]!));
      const toStore: StoredEmbedding[] = missing.map((i, k) => {
        result[i] = fresh[k]!;
        return {
          productId: products[i]!.id,
          space: embedder.space,
          textSha256: hashes[i]!,
          vector: fresh[k]!,
        };
      });
      await embeddings.saveMany(db, toStore);
    }
    return result as Float32Array[];
  };

  return {
    async index(products) {
      const shown = products.filter(isPublic);
      await vectors.removeMany(
        products.filter((product) => !isPublic(product)).map(({ id, version }) => ({ id, version })),
      );
      for (const product of shown) unembedded.set(product.id, product);
      for (const hidden of products.filter((product) => !isPublic(product))) unembedded.delete(hidden.id);
      if (unembedded.size === 0) return;
      const batch = [...unembedded.values()];
      let found: Float32Array[];
      try {
        found = await vectorsOf(batch);
      } catch (error) {
        logger.warn(
          { err: error, products: batch.length },
          'embedding failed: these listings are missing from semantic search until it succeeds',
        );
        return;
      }
      for (const product of batch) {
        if (unembedded.get(product.id) === product) unembedded.delete(product.id);
      }
      await vectors.upsertMany(
        batch.map((product, i) => ({ document: toSearchDocument(product), vector: found[i]! })),
      );
    },
    clear: async () => {
      unembedded.clear();
      await vectors.clear();
    },
  };
};
