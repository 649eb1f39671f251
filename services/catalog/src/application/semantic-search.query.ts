import { z } from 'zod';
import type { Embedder } from '@marketplace/embeddings';
import { AppError, unavailable } from '@marketplace/platform';
import { SEMANTIC_SEARCH_FEEDBACK, type VectorIndex } from '@marketplace/search';
import { CATEGORIES, CONDITIONS, LISTING_LIMITS } from '@marketplace/vocabulary';
import type { CatalogProduct } from '../domain/catalog-product.js';
import { parseInput } from './validate-input.js';

/** docs/specification.md, "Catalog endpoints" and 8: semantic search takes a query of at most 1,000 characters and answers 1-50 matches. */
export const SEMANTIC_SEARCH_LIMITS = { maxQueryCharacters: 1_000, maxLimit: 50 } as const;

export interface SemanticSearchInput {
  readonly query: string;
  readonly category?: string;
  readonly condition?: string;
  /** Per unit, inclusive. */
  readonly maxPriceCents?: number;
  readonly limit: number;
}

export interface SemanticMatch {
  readonly product: CatalogProduct;
  /** Cosine similarity of the query's and the listing's embeddings, in [0, 1]. */
  readonly similarity: number;
}

/** What semantic search needs: the embedder of the query and the index of the listings' vectors. */
export interface SemanticSearchBackend {
  readonly embedder: Embedder;
  readonly vectors: VectorIndex<CatalogProduct>;
}

const semanticSearchSchema = z.object({
  query: z
    .string()
    .refine((query) => query.trim() !== '', { message: 'must not be empty' })
    .refine((query) => [...query].length <= SEMANTIC_SEARCH_LIMITS.maxQueryCharacters, {
      message: `must be at most ${SEMANTIC_SEARCH_LIMITS.maxQueryCharacters} characters`,
    }),
  category: z.enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(', ')}` }).optional(),
  condition: z.enum(CONDITIONS, { error: `must be one of ${CONDITIONS.join(', ')}` }).optional(),
  maxPriceCents: z
    .number()
    .int('must be a whole number of cents')
    .min(0, 'must not be negative')
    .max(LISTING_LIMITS.maxPriceCents, `must be at most ${LISTING_LIMITS.maxPriceCents}`)
    .optional(),
  limit: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(SEMANTIC_SEARCH_LIMITS.maxLimit, `must be at most ${SEMANTIC_SEARCH_LIMITS.maxLimit}`),
});

/**
 * SemanticSearch: the public listings nearest in meaning to the query, the filters applied to the nearest
 * candidates (docs/specification.md, "Catalog endpoints"). Without an embedder (EMBEDDINGS_PROVIDER=none) it is `unavailable`, which the gateway
 * answers 503 as the specification says; invalid input is reported first, so a caller learns both.
 */
export const semanticSearch = async (
  backend: SemanticSearchBackend | undefined,
  input: SemanticSearchInput,
): Promise<SemanticMatch[]> => {
  const { query, category, condition, maxPriceCents, limit } = parseInput(
    semanticSearchSchema,
    input,
    'semantic search',
  );
  if (backend === undefined) {
    throw unavailable('semantic search is not configured: the catalog runs without an embedding provider');
  }
  const [vector] = await backend.embedder.embed([query]).catch((error: unknown) => {
    // A remote provider that is down or refuses makes the search unavailable, not the request wrong.
    throw new AppError('unavailable', 'the embedding provider did not answer', [], { cause: error });
  });
  const hits = await backend.vectors.search({
    vector: vector!,
    // Public surfaces only (product-visibility.ts); the index holds public listings only anyway.
    filters: { visibility: 'public', category, condition, maxPriceCents },
    limit,
    feedback: SEMANTIC_SEARCH_FEEDBACK,
  });
  return hits.map((hit) => ({ product: hit.document.payload, similarity: hit.similarity }));
};
