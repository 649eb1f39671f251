import { z } from 'zod';
import { CATALOG_SEARCH_LIMITS, CATEGORIES, CONDITIONS } from '@marketplace/vocabulary';
import { once, optionalParameter, wholeNumber } from '../../edge/schemas/query.schema.js';
import { characterCount } from '../../edge/schemas/validate.js';

/**
 * Query parameters of GET /api/ucp/catalog/products. Out-of-range or malformed values are 400s naming the
 * parameter, never clamped (`limit=101` is an error). A parameter given twice is an error; an empty value
 * (`?q=`) counts as not given, as HTML forms send it; unknown parameters are ignored.
 */
const MAX_QUERY_CHARACTERS = 1_000;
/** The catalog's paging fields are int32. */
const MAX_OFFSET = 2_147_483_647;

/** Dollars with at most 2 decimals, as the specification fixes for these two parameters. */
const dollars = once.regex(
  /^[0-9]{1,10}(\.[0-9]{1,2})?$/,
  'must be an amount in dollars with at most 2 decimals',
);

export const catalogSearchQuerySchema = z
  .object({
    q: optionalParameter(
      once.refine(
        (value) => characterCount(value) <= MAX_QUERY_CHARACTERS,
        `must be at most ${MAX_QUERY_CHARACTERS} characters`,
      ),
    ),
    category: optionalParameter(once.pipe(z.enum(CATEGORIES))),
    condition: optionalParameter(once.pipe(z.enum(CONDITIONS))),
    min_price: optionalParameter(dollars),
    max_price: optionalParameter(dollars),
    limit: optionalParameter(wholeNumber(1, CATALOG_SEARCH_LIMITS.maxLimit)).transform(
      (limit) => limit ?? CATALOG_SEARCH_LIMITS.defaultLimit,
    ),
    offset: optionalParameter(wholeNumber(0, MAX_OFFSET)).transform((offset) => offset ?? 0),
  })
  .refine(
    ({ min_price, max_price }) =>
      min_price === undefined || max_price === undefined || Number(min_price) <= Number(max_price),
    { path: ['min_price'], message: 'must not exceed max_price' },
  );

export type CatalogSearchQuery = z.output<typeof catalogSearchQuerySchema>;
