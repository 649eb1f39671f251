import type { QueryTerm } from '@marketplace/search';
import { indexTerms, queryTerms } from '@marketplace/search';
import { BULK_THRESHOLD_DEFAULTS } from '@marketplace/vocabulary';
import type { SavedSearchQuery } from './subscription.js';

/** What matching needs to know of a new listing (the listing event plus the seller's projected country). */
export interface ListingFacts {
  readonly productId: string;
  readonly sellerAccountId: number;
  readonly title: string;
  readonly description: string;
  readonly category: string;
  /** '' when the seller gave none. */
  readonly condition: string;
  readonly priceCents: number;
  readonly currency: string;
  readonly quantity: number;
  readonly minOrderQuantity: number;
  readonly promotePublicly: boolean;
  readonly imageUrls: readonly string[];
  readonly createdAt: number;
  /** Undefined while the seller's account is unknown to the projection. */
  readonly sellerCountry?: string;
}

/** A lot over the bulk threshold (docs/specification.md, "Checkout and orders"): what `bulkDealsOnly` asks for. */
export const isBulkDeal = (listing: Pick<ListingFacts, 'quantity' | 'priceCents'>): boolean =>
  listing.quantity > BULK_THRESHOLD_DEFAULTS.moreThanUnits ||
  listing.quantity * listing.priceCents > BULK_THRESHOLD_DEFAULTS.moreThanSubtotalCents;

/** The listing's text as the lexical catalog search indexes it: title and description terms. */
export const listingTermsOf = (listing: Pick<ListingFacts, 'title' | 'description'>): ReadonlySet<string> =>
  new Set([...indexTerms(listing.title), ...indexTerms(listing.description)]);

/**
 * Text matching as the catalog's lexical search does it (AND of the query's terms, no prefixes or typos): each
 * term is in the listing, whole or, for a compound written with joiners, by all of its parts.
 */
export const matchesText = (terms: readonly QueryTerm[], listingTerms: ReadonlySet<string>): boolean =>
  terms.every(
    ({ whole, parts }) =>
      listingTerms.has(whole) || (parts.length > 0 && parts.every((part) => listingTerms.has(part))),
  );

/** The terms of a saved search's text; empty when it has none (or only function words): any text matches. */
export const searchTermsOf = (query: Pick<SavedSearchQuery, 'search'>): QueryTerm[] =>
  query.search === undefined ? [] : queryTerms(query.search);

/**
 * Whether a listing matches a saved search. Only promoted listings ever match (docs/specification.md, "Listings"). A
 * `sellerCountry` filter needs the seller's country: while it is unknown, the listing does not match.
 */
export const matchesQuery = (
  query: SavedSearchQuery,
  listing: ListingFacts,
  listingTerms: ReadonlySet<string>,
): boolean =>
  listing.promotePublicly &&
  (query.category === undefined || query.category === listing.category) &&
  (query.condition === undefined || query.condition === listing.condition) &&
  (query.minPriceCents === undefined || listing.priceCents >= query.minPriceCents) &&
  (query.maxPriceCents === undefined || listing.priceCents <= query.maxPriceCents) &&
  (query.minQuantity === undefined || listing.quantity >= query.minQuantity) &&
  (query.sellerCountry === undefined || query.sellerCountry === listing.sellerCountry) &&
  (query.moqRange?.min === undefined || listing.minOrderQuantity >= query.moqRange.min) &&
  (query.moqRange?.max === undefined || listing.minOrderQuantity <= query.moqRange.max) &&
  (!query.bulkDealsOnly || isBulkDeal(listing)) &&
  matchesText(searchTermsOf(query), listingTerms);
