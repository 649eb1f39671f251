import { parseProductId } from '@marketplace/platform';
import { accountV1, listingV1 } from '@marketplace/proto';
import type { NewListing } from '../application/ports.js';

export const LISTING_TOPIC = 'marketplace.listing.v1';
export const ACCOUNT_TOPIC = 'marketplace.account.v1';

/**
 * `marketplace.listing.v1` → a new listing, or undefined for every other kind of listing event (saved searches
 * are about new lots). Throws on bytes that are not a well-formed ListingEvent, so the log redelivers.
 */
export const decodeNewListing = (bytes: Uint8Array): NewListing | undefined => {
  const event = listingV1.ListingEvent.decode(bytes);
  if (event.payload?.$case !== 'created') return undefined;
  const { listing } = event.payload.value;
  if (listing?.productId !== event.productId || parseProductId(event.productId) === undefined) {
    throw new Error(`listing event ${event.eventId}: listing missing, malformed or of another product`);
  }
  return {
    eventId: event.eventId,
    listing: {
      productId: listing.productId,
      sellerAccountId: listing.sellerAccountId,
      title: listing.name,
      description: listing.description,
      category: listing.category,
      condition: listing.condition,
      priceCents: listing.priceCents,
      currency: listing.currency,
      quantity: listing.quantity,
      minOrderQuantity: listing.minOrderQuantity,
      promotePublicly: listing.promotePublicly,
      imageUrls: [listing.imageUrl, ...listing.galleryImageUrls].filter((url) => url !== ''),
      createdAt: listing.createdAtMs,
    },
  };
};

/** A seller's country from `marketplace.account.v1`; undefined for buyers and event kinds this version does not know. */
export const decodeSellerCountry = (
  bytes: Uint8Array,
): { accountId: number; country: string; version: number } | undefined => {
  const event = accountV1.AccountEvent.decode(bytes);
  if (event.payload?.$case !== 'created' || event.payload.value.role !== 'seller') return undefined;
  if (!Number.isSafeInteger(event.accountId) || event.accountId < 1 || event.version < 1) {
    throw new Error(`account event ${event.eventId} has a malformed account id or version`);
  }
  return {
    accountId: event.accountId,
    country: event.payload.value.country.toUpperCase(),
    version: event.version,
  };
};
