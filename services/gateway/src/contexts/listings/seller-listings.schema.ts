import { z } from 'zod';
import { CATEGORIES } from '@marketplace/vocabulary';
import { once, optionalParameter, wholeNumber } from '../../edge/schemas/query.schema.js';

/** The listing service's statuses and visibilities (services/listing README, "ListSellerListings"). */
export const LISTING_STATUSES = ['active', 'sold_out', 'withdrawn'] as const;
export const LISTING_VISIBILITIES = ['public', 'private'] as const;
export const SELLER_LISTINGS_MAX_LIMIT = 200;
export const SELLER_LISTINGS_DEFAULT_LIMIT = 50;

/**
 * `updated_since` of GET /api/products and list_my_listings: no listing changed before 1970 (the listing
 * service's times start there), so an earlier time is refused here, under the name the caller sent.
 */
export const updatedSinceSchema = z.iso
  .datetime({ offset: true, error: 'must be an RFC 3339 date-time, e.g. 2026-11-01T00:00:00Z' })
  .refine((time) => Date.parse(time) >= 0, 'must be 1970-01-01T00:00:00Z or later');

/**
 * Query parameters of GET /api/products: the caller's own listings, filtered. Bad values are 400s naming the
 * parameter; an empty value counts as not given.
 */
export const sellerListingsQuerySchema = z.object({
  status: optionalParameter(once.pipe(z.enum(LISTING_STATUSES))).describe(
    'active (in stock), sold_out or withdrawn; all when absent',
  ),
  visibility: optionalParameter(once.pipe(z.enum(LISTING_VISIBILITIES))).describe(
    'public (promotePublicly) or private (in-app only); both when absent',
  ),
  category: optionalParameter(once.pipe(z.enum(CATEGORIES))),
  sku: optionalParameter(once.max(255, 'must be at most 255 characters')).describe('exact sku'),
  updated_since: optionalParameter(once.pipe(updatedSinceSchema)).describe(
    'only listings changed at or after this time',
  ),
  cursor: optionalParameter(once.max(100, 'is not a cursor this list returned')).describe(
    'next_cursor of the previous page',
  ),
  limit: optionalParameter(wholeNumber(1, SELLER_LISTINGS_MAX_LIMIT))
    .transform((limit) => limit ?? SELLER_LISTINGS_DEFAULT_LIMIT)
    .describe(`page size, 1 to ${SELLER_LISTINGS_MAX_LIMIT}, default ${SELLER_LISTINGS_DEFAULT_LIMIT}`),
});

export type SellerListingsQuery = z.output<typeof sellerListingsQuerySchema>;
