import { z } from 'zod';
import { CATEGORIES, CONDITIONS, LISTING_LIMITS } from '@marketplace/vocabulary';
import { characterCount } from '../../edge/schemas/validate.js';

/** docs/specification.md, "Catalog endpoints" and 8: the query at most 1,000 characters, limit 1-50 (default 10), max_price in cents per unit. */
export const SEMANTIC_SEARCH_LIMITS = { maxQueryCharacters: 1_000, defaultLimit: 10, maxLimit: 50 } as const;

const wholeNumber = (min: number, max: number) =>
  z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/**
 * The fields of POST /api/ucp/catalog/search and of the search_inventory_semantic tool (the same names):
 * out-of-range values are 400s naming the field, never clamped.
 */
export const semanticSearchFields = {
  query: z
    .string({ error: 'is required and must be a string' })
    .refine((query) => query.trim() !== '', 'must not be empty')
    .refine(
      (query) => characterCount(query) <= SEMANTIC_SEARCH_LIMITS.maxQueryCharacters,
      `must be at most ${SEMANTIC_SEARCH_LIMITS.maxQueryCharacters} characters`,
    ),
  category: z.enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(', ')}` }).optional(),
  condition: z.enum(CONDITIONS, { error: `must be one of ${CONDITIONS.join(', ')}` }).optional(),
  max_price: wholeNumber(0, LISTING_LIMITS.maxPriceCents).optional(),
  limit: wholeNumber(1, SEMANTIC_SEARCH_LIMITS.maxLimit).default(SEMANTIC_SEARCH_LIMITS.defaultLimit),
};

/** The body of POST /api/ucp/catalog/search; unknown fields are refused so a typo is not silently ignored. */
export const semanticSearchBodySchema = z.strictObject(semanticSearchFields, {
  error: (issue) => (issue.code === 'invalid_type' ? 'must be a JSON object' : undefined),
});

export type SemanticSearchBody = z.output<typeof semanticSearchBodySchema>;
