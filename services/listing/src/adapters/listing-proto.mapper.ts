import type { listingV1 } from '@marketplace/proto';
import { isCategory, isCondition } from '@marketplace/vocabulary';
import type { Listing, ListingShipping } from '../domain/listing.events.js';
import { SHIPPING_MODES } from '@marketplace/vocabulary';

/**
 * Domain values ⇄ protobuf messages, shared by the event codec and the gRPC transport so the two never disagree.
 * Protobuf has no absent strings: an absent condition, brand or image travels as ''.
 */

export const toListingMessage = (listing: Listing, version: number): listingV1.Listing => ({
  productId: listing.productId,
  sellerAccountId: listing.sellerAccountId,
  name: listing.name,
  description: listing.description,
  sku: listing.sku,
  category: listing.category,
  condition: listing.condition ?? '',
  priceCents: listing.priceCents,
  currency: listing.currency,
  quantity: listing.quantity,
  minOrderQuantity: listing.minOrderQuantity,
  minQuoteQuantity: listing.minQuoteQuantity,
  brand: listing.brand ?? '',
  imageUrl: listing.imageUrl ?? '',
  galleryImageUrls: [...listing.galleryImageUrls],
  promotePublicly: listing.promotePublicly,
  originalRetailPriceCents: listing.originalRetailPriceCents,
  instantCheckout: listing.instantCheckout,
  createdAtMs: listing.createdAt,
  updatedAtMs: listing.updatedAt,
  confirmedAtMs: listing.confirmedAt,
  version,
  withdrawnAtMs: listing.withdrawnAt,
  imagePlaceholder: listing.imagePlaceholder === true,
  shipping: listing.shipping === undefined ? undefined : toShippingMessage(listing.shipping),
});

export const toShippingMessage = (shipping: ListingShipping): listingV1.ListingShipping => ({
  mode: shipping.mode,
  cents: 'cents' in shipping ? shipping.cents : undefined,
  shipFromRegion: 'shipFromRegion' in shipping ? shipping.shipFromRegion : undefined,
});

/** Throws on a mode this version does not know. */
export const fromShippingMessage = (message: listingV1.ListingShipping): ListingShipping => {
  const { mode } = message;
  switch (mode) {
    case 'flat_per_order':
    case 'per_unit':
      return { mode, cents: message.cents ?? 0 };
    case 'buyer_pickup':
      return { mode, shipFromRegion: message.shipFromRegion ?? '' };
    case 'included':
    case 'quoted_on_request':
      return { mode };
    default:
      throw new Error(`unknown shipping mode ${mode}; known: ${SHIPPING_MODES.join(', ')}`);
  }
};

const absentWhenEmpty = (value: string): string | undefined => (value === '' ? undefined : value);

/** Throws when the message holds a category or condition this version does not know. */
export const fromListingMessage = (message: listingV1.Listing): Listing => {
  const { category } = message;
  const condition = absentWhenEmpty(message.condition);
  if (!isCategory(category))
    throw new Error(`listing ${message.productId} has an unknown category: ${category}`);
  if (condition !== undefined && !isCondition(condition)) {
    throw new Error(`listing ${message.productId} has an unknown condition: ${condition}`);
  }
  return {
    productId: message.productId,
    sellerAccountId: message.sellerAccountId,
    name: message.name,
    description: message.description,
    sku: message.sku,
    category,
    condition,
    priceCents: message.priceCents,
    currency: message.currency,
    quantity: message.quantity,
    minOrderQuantity: message.minOrderQuantity,
    minQuoteQuantity: message.minQuoteQuantity,
    brand: absentWhenEmpty(message.brand),
    imageUrl: absentWhenEmpty(message.imageUrl),
    galleryImageUrls: message.galleryImageUrls,
    originalRetailPriceCents: message.originalRetailPriceCents,
    instantCheckout: message.instantCheckout,
    promotePublicly: message.promotePublicly,
    createdAt: message.createdAtMs,
    updatedAt: message.updatedAtMs,
    confirmedAt: message.confirmedAtMs,
    ...(message.withdrawnAtMs === undefined ? {} : { withdrawnAt: message.withdrawnAtMs }),
    ...(message.imagePlaceholder ? { imagePlaceholder: true } : {}),
    ...(message.shipping === undefined ? {} : { shipping: fromShippingMessage(message.shipping) }),
  };
};
