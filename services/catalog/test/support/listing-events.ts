import { randomUUID } from 'node:crypto';
import type { DeliveredMessage, LogMessage } from '@marketplace/eventlog';
import { listingV1 } from '@marketplace/proto';

export const CREATED_AT = Date.UTC(2026, 8, 1, 12, 0, 0);
export const SELLER = 7;

/** A listing as the listing service sends it; product `n` is created `n` minutes after CREATED_AT. */
export const listingMessage = (n: number, overrides: Partial<listingV1.Listing> = {}): listingV1.Listing => ({
  productId: `product_${n}`,
  sellerAccountId: SELLER,
  name: `Pallet of USB-C chargers ${n}`,
  description: '480 units, 65 W, boxed',
  sku: `SKU-${n}`,
  category: 'electronics',
  condition: 'overstock',
  priceCents: 1_250,
  currency: 'USD',
  quantity: 480,
  minOrderQuantity: 10,
  minQuoteQuantity: 0,
  brand: 'Anker',
  imageUrl: `https://images.example/${n}.jpg`,
  galleryImageUrls: [],
  promotePublicly: true,
  originalRetailPriceCents: 2_999,
  instantCheckout: false,
  createdAtMs: CREATED_AT + n * 60_000,
  updatedAtMs: CREATED_AT + n * 60_000,
  confirmedAtMs: CREATED_AT + n * 60_000,
  version: 1,
  imagePlaceholder: false,
  shipping: undefined,
  ...overrides,
});

/** `ListingCreated` on the log, as the listing service's outbox relay publishes it. */
export const listingCreated = (
  listing: listingV1.Listing,
  { version = listing.version, eventId = randomUUID() }: { version?: number; eventId?: string } = {},
): LogMessage => ({
  key: listing.productId,
  value: listingV1.ListingEvent.encode({
    eventId,
    productId: listing.productId,
    version,
    occurredAtMs: listing.updatedAtMs,
    actor: { kind: 'seller', id: String(listing.sellerAccountId) },
    correlationId: '',
    payload: { $case: 'created', value: { listing: { ...listing, version } } },
  }).finish(),
  headers: {
    ce_id: eventId,
    ce_type: 'marketplace.listing.v1.ListingCreated',
    ce_subject: listing.productId,
  },
});

/** A later state-carrying event (the listing after an update or a quantity change), version `listing.version`. */
export const listingChanged = (
  listing: listingV1.Listing,
  kind: 'updated' | 'quantitySet' = 'updated',
): LogMessage => {
  const eventId = randomUUID();
  const payload: listingV1.ListingEvent['payload'] =
    kind === 'updated'
      ? { $case: 'updated', value: { listing, changedFields: [] } }
      : { $case: 'quantitySet', value: { listing } };
  return {
    key: listing.productId,
    value: listingV1.ListingEvent.encode({
      eventId,
      productId: listing.productId,
      version: listing.version,
      occurredAtMs: listing.updatedAtMs,
      actor: { kind: 'seller', id: String(listing.sellerAccountId) },
      correlationId: '',
      payload,
    }).finish(),
    headers: { ce_id: eventId, ce_subject: listing.productId },
  };
};

/** A listing event of a kind this version does not know: no payload it can read. */
export const unknownListingEvent = (productId: string, version: number): LogMessage => {
  const eventId = randomUUID();
  return {
    key: productId,
    value: listingV1.ListingEvent.encode({
      eventId,
      productId,
      version,
      occurredAtMs: CREATED_AT,
      actor: undefined,
      correlationId: '',
      payload: undefined,
    }).finish(),
    headers: { ce_id: eventId },
  };
};

let offset = 0;
/** The message as a log would deliver it. */
export const delivered = (message: LogMessage): DeliveredMessage => ({
  ...message,
  topic: 'marketplace.listing.v1',
  partition: 0,
  offset: String(offset++),
});
