import { describe, expect, it } from '@jest/globals';
import type { RecordedEvent } from '@marketplace/eventsourcing';
import { listingV1 } from '@marketplace/proto';
import { decodeListingEvent, encodeListingEvent } from '../src/adapters/listing-event.codec.js';
import type { Listing, ListingCreated } from '../src/domain/listing.events.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);

const minimal: Listing = {
  productId: 'product_42',
  sellerAccountId: 7,
  name: 'Pallet of USB-C chargers',
  description: '480 units',
  sku: 'SKU-42',
  category: 'electronics',
  priceCents: 100,
  currency: 'USD',
  quantity: 1,
  minOrderQuantity: 1,
  minQuoteQuantity: 1,
  galleryImageUrls: [],
  instantCheckout: false,
  promotePublicly: false,
  createdAt: NOW,
  updatedAt: NOW,
  confirmedAt: NOW,
};

const full: Listing = {
  ...minimal,
  condition: 'shelf_pulls',
  brand: 'Anker',
  imageUrl: 'https://img.example.com/0.jpg',
  galleryImageUrls: ['https://img.example.com/1.jpg', 'https://img.example.com/2.jpg'],
  originalRetailPriceCents: 3_999,
  instantCheckout: true,
  promotePublicly: true,
};

const recorded = (listing: Listing): RecordedEvent<ListingCreated> => ({
  eventId: '01990000-0000-7000-8000-000000000001',
  streamId: listing.productId,
  streamType: 'listing',
  version: 1,
  type: 'ListingCreated',
  data: { listing },
  metadata: { actor: { kind: 'seller', id: '7' }, correlationId: 'req-1' },
  occurredAt: NOW,
  globalPosition: '5',
});

describe('listing event codec', () => {
  it.each([
    ['every optional field absent', minimal],
    ['every optional field present', full],
  ])('round-trips ListingCreated through protobuf with %s', (_case, listing) => {
    expect(decodeListingEvent(encodeListingEvent(recorded(listing)).value)).toEqual({
      eventId: '01990000-0000-7000-8000-000000000001',
      streamId: 'product_42',
      version: 1,
      occurredAt: NOW,
      actor: { kind: 'seller', id: '7' },
      correlationId: 'req-1',
      event: { type: 'ListingCreated', data: { listing } },
    });
  });

  it.each<[string, Listing['shipping']]>([
    ['included', { mode: 'included' }],
    ['flat_per_order', { mode: 'flat_per_order', cents: 15_000 }],
    ['per_unit', { mode: 'per_unit', cents: 250 }],
    ['buyer_pickup', { mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' }],
    ['quoted_on_request', { mode: 'quoted_on_request' }],
  ])('round-trips ListingShippingSet with %s freight', (_mode, shipping) => {
    const listing: Listing = { ...full, ...(shipping === undefined ? {} : { shipping }) };
    const event = { ...recorded(listing), type: 'ListingShippingSet', version: 2 } as RecordedEvent;
    expect(decodeListingEvent(encodeListingEvent(event).value).event).toEqual({
      type: 'ListingShippingSet',
      data: { listing },
    });
  });

  it('writes the marketplace.listing.v1.ListingEvent message other services decode', () => {
    const message = listingV1.ListingEvent.decode(encodeListingEvent(recorded(full)).value);
    expect(message.payload?.$case).toBe('created');
    expect(message.payload?.value.listing).toMatchObject({
      productId: 'product_42',
      priceCents: 100,
      version: 1,
    });
  });

  it('labels the payload as protobuf for the content-type header', () => {
    expect(encodeListingEvent(recorded(minimal)).contentType).toBe('application/protobuf');
  });

  it('refuses to encode an event that is not a listing event', () => {
    const foreign = { ...recorded(minimal), type: 'QuoteRequested' };
    expect(() => encodeListingEvent(foreign)).toThrow(
      'product_42 holds an event that is not a listing event: QuoteRequested',
    );
  });

  it('refuses a message without a payload', () => {
    const empty = listingV1.ListingEvent.encode(
      listingV1.ListingEvent.fromPartial({ eventId: 'x' }),
    ).finish();
    expect(() => decodeListingEvent(empty)).toThrow('ListingEvent without a payload');
  });
});
