import { z } from 'zod';
import { SEARCH_TEXT_LIMITS, wordCount } from '@marketplace/search';
import type { SearchIndex, SearchQuery } from '@marketplace/search';
import { CATALOG_SEARCH_LIMITS, CATEGORIES, CONDITIONS } from '@marketplace/vocabulary';
import type { CatalogProduct } from '../domain/catalog-product.js';
import { parseInput } from './validate-input.js';

/** A catalog search as callers send it; prices in cents. */
export interface SearchProductsInput {
  /** Words that must all appear in the title or description; '' lists the newest first. */
  readonly query: string;
  readonly category?: string;
  readonly condition?: string;
  readonly minPriceCents?: number;
  readonly maxPriceCents?: number;
  /** Whole percent 0-100; listings without an original retail price never pass. */
  readonly minDiscountPercent?: number;
  readonly limit: number;
  readonly offset: number;
}

export interface ProductPage {
  readonly products: readonly CatalogProduct[];
  /** Every publicly visible product that matches, regardless of the page. */
  readonly total: number;
}

/** The catalog's paging fields travel as int32. */
const MAX_OFFSET = 2_147_483_647;
const cents = z
  .number()
  .int('must be a whole number of cents')
  .min(0, 'must not be negative')
  .max(Number.MAX_SAFE_INTEGER);

// The gateway validates the same request; the service checks again because it trusts no caller.
const searchProductsSchema = z
  .object({
    query: z
      .string()
      .refine((query) => [...query].length <= SEARCH_TEXT_LIMITS.maxCharacters, {
        message: `must be at most ${SEARCH_TEXT_LIMITS.maxCharacters} characters`,
      })
      .refine((query) => wordCount(query) <= SEARCH_TEXT_LIMITS.maxWords, {
        message: `must be at most ${SEARCH_TEXT_LIMITS.maxWords} words`,
      }),
    category: z.enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(', ')}` }).optional(),
    condition: z.enum(CONDITIONS, { error: `must be one of ${CONDITIONS.join(', ')}` }).optional(),
    minPriceCents: cents.optional(),
    maxPriceCents: cents.optional(),
    minDiscountPercent: z
      .number()
      .int('must be a whole percent')
      .min(0, 'must be at least 0')
      .max(100, 'must be at most 100')
      .optional(),
    limit: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(CATALOG_SEARCH_LIMITS.maxLimit, `must be at most ${CATALOG_SEARCH_LIMITS.maxLimit}`),
    offset: z.number().int('must be a whole number').min(0, 'must not be negative').max(MAX_OFFSET),
  })
  .refine(
    ({ minPriceCents, maxPriceCents }) =>
      minPriceCents === undefined || maxPriceCents === undefined || minPriceCents <= maxPriceCents,
    { path: ['minPriceCents'], message: 'must not exceed maxPriceCents' },
  );

/** The index query for a search request; throws AppError('validation') naming every offending field. */
export const toSearchQuery = (input: SearchProductsInput): SearchQuery => {
  const { query, category, condition, minPriceCents, maxPriceCents, minDiscountPercent, limit, offset } =
    parseInput(searchProductsSchema, input, 'search');
  return {
    text: query,
    // Search serves public surfaces: only publicly promoted listings (see product-visibility.ts).
    filters: { visibility: 'public', category, condition, minPriceCents, maxPriceCents, minDiscountPercent },
    limit,
    offset,
  };
};

/** SearchProducts: one page of publicly visible products, best match (or newest) first. */
export const searchProducts = async (
  index: SearchIndex<CatalogProduct>,
  input: SearchProductsInput,
): Promise<ProductPage> => {
  const { hits, total } = await index.search(toSearchQuery(input));
  return { products: hits.map((hit) => hit.document.payload), total };
};
