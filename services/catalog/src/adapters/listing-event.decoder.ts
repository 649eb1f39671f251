import { parseProductId } from '@marketplace/platform';
import { listingV1 } from '@marketplace/proto';
import type { CatalogProduct } from '../domain/catalog-product.js';
import type { ListingFact } from '../domain/listing-fact.js';

/** protobuf `Listing` → the catalog's product; '' stays '' for the optional texts protobuf cannot omit. */
const productOf = (listing: listingV1.Listing, version: number): CatalogProduct => ({
  id: listing.productId,
  sellerAccountId: listing.sellerAccountId,
  title: listing.name,
  description: listing.description,
  sku: listing.sku,
  category: listing.category,
  condition: listing.condition,
  priceCents: listing.priceCents,
  currency: listing.currency,
  quantity: listing.quantity,
  minOrderQuantity: listing.minOrderQuantity,
  minQuoteQuantity: listing.minQuoteQuantity,
  brand: listing.brand,
  imageUrls: [listing.imageUrl, ...listing.galleryImageUrls].filter((url) => url !== ''),
  ...(listing.originalRetailPriceCents === undefined
    ? {}
    : { originalRetailPriceCents: listing.originalRetailPriceCents }),
  instantCheckout: listing.instantCheckout,
  ...(listing.shipping === undefined
    ? {}
    : {
        shipping: {
          mode: listing.shipping.mode,
          ...(listing.shipping.cents === undefined ? {} : { cents: listing.shipping.cents }),
          ...(listing.shipping.shipFromRegion === undefined
            ? {}
            : { shipFromRegion: listing.shipping.shipFromRegion }),
        },
      }),
  // A withdrawn listing leaves every agent-facing surface, as one never promoted (its seller still sees it).
  promotePublicly: listing.promotePublicly && listing.withdrawnAtMs === undefined,
  createdAtMs: listing.createdAtMs,
  updatedAtMs: listing.updatedAtMs,
  version,
});

/**
 * Reads a `marketplace.listing.v1` message value. Every kind carries the whole listing. Returns `undefined` for
 * an event kind this version does not know (a newer producer's): the catalog cannot project it, and a rebuild after an upgrade replays it.
 * Throws for bytes that are not a well-formed ListingEvent: the log redelivers it until someone looks.
 */
export const decodeListingEvent = (bytes: Uint8Array): ListingFact | undefined => {
  const event = listingV1.ListingEvent.decode(bytes);
  const where = `listing event ${event.eventId || '(no id)'} of ${event.productId || '(no product)'}`;
  if (parseProductId(event.productId) === undefined) throw new Error(`${where}: malformed product id`);
  if (!Number.isSafeInteger(event.version) || event.version < 1) throw new Error(`${where}: invalid version`);
  const { payload } = event;
  if (payload === undefined) return undefined;
  const { listing } = payload.value;
  if (listing?.productId !== event.productId)
    throw new Error(`${where}: listing missing or of another product`);
  return {
    type: payload.$case === 'created' ? 'ListingCreated' : 'ListingChanged',
    eventId: event.eventId,
    productId: event.productId,
    version: event.version,
    occurredAtMs: event.occurredAtMs,
    product: productOf(listing, event.version),
  };
};
