import { describe, expect, it } from '@jest/globals';
import { listingV1 } from '@marketplace/proto';
import { decodeListingEvent } from '../src/adapters/listing-event.decoder.js';
import { listingCreated, listingMessage, unknownListingEvent } from './support/listing-events.js';

describe('decodeListingEvent', () => {
  it('reads a withdrawn listing as not promoted, and a relisted one as its seller set it', () => {
    const listing = listingMessage(4, { promotePublicly: true });
    const encode = (payload: listingV1.ListingEvent['payload'], version: number) =>
      listingV1.ListingEvent.encode({
        eventId: `e-${version}`,
        productId: listing.productId,
        version,
        occurredAtMs: listing.updatedAtMs,
        actor: { kind: 'seller', id: '7' },
        correlationId: '',
        payload,
      }).finish();
    const withdrawn = { ...listing, withdrawnAtMs: listing.updatedAtMs, version: 2 };
    const hidden = decodeListingEvent(encode({ $case: 'withdrawn', value: { listing: withdrawn } }, 2));
    expect(hidden).toMatchObject({ type: 'ListingChanged', product: { promotePublicly: false, version: 2 } });
    const relisted = { ...listing, version: 3 };
    const shown = decodeListingEvent(encode({ $case: 'relisted', value: { listing: relisted } }, 3));
    expect(shown).toMatchObject({ type: 'ListingChanged', product: { promotePublicly: true, version: 3 } });
  });

  it('reads ListingCreated into the catalog product, main image first', () => {
    const listing = listingMessage(3, { galleryImageUrls: ['https://images.example/3b.jpg'], condition: '' });
    const message = listingCreated(listing, { version: 1, eventId: 'e-1' });

    expect(decodeListingEvent(message.value)).toEqual({
      type: 'ListingCreated',
      eventId: 'e-1',
      productId: 'product_3',
      version: 1,
      occurredAtMs: listing.updatedAtMs,
      product: {
        id: 'product_3',
        sellerAccountId: 7,
        title: listing.name,
        description: listing.description,
        sku: 'SKU-3',
        category: 'electronics',
        condition: '',
        priceCents: 1_250,
        currency: 'USD',
        quantity: 480,
        minOrderQuantity: 10,
        minQuoteQuantity: 0,
        brand: 'Anker',
        imageUrls: ['https://images.example/3.jpg', 'https://images.example/3b.jpg'],
        originalRetailPriceCents: 2_999,
        instantCheckout: false,
        promotePublicly: true,
        createdAtMs: listing.createdAtMs,
        updatedAtMs: listing.updatedAtMs,
        version: 1,
      },
    });
  });

  it('leaves out an absent original retail price and an absent image', () => {
    const listing = listingMessage(4, { originalRetailPriceCents: undefined, imageUrl: '' });

    const fact = decodeListingEvent(listingCreated(listing).value);

    expect(fact?.product).not.toHaveProperty('originalRetailPriceCents');
    expect(fact?.product.imageUrls).toEqual([]);
  });

  it('reads every later listing event as a change carrying the whole listing', () => {
    const listing = listingMessage(5, { priceCents: 990, quantity: 0, version: 4 });
    const encode = (payload: listingV1.ListingEvent['payload']): Uint8Array =>
      listingV1.ListingEvent.encode(
        listingV1.ListingEvent.fromPartial({ eventId: 'e-4', productId: 'product_5', version: 4, payload }),
      ).finish();
    const reservation = { listing, reservationId: 'order-1', quantity: 3 };
    const payloads: listingV1.ListingEvent['payload'][] = [
      { $case: 'updated', value: { listing, changedFields: ['price'] } },
      { $case: 'quantitySet', value: { listing } },
      { $case: 'stockReserved', value: reservation },
      { $case: 'stockReleased', value: reservation },
    ];
    for (const payload of payloads) {
      const fact = decodeListingEvent(encode(payload));
      expect(fact).toMatchObject({ type: 'ListingChanged', productId: 'product_5', version: 4 });
      expect(fact?.product).toMatchObject({ priceCents: 990, quantity: 0, version: 4 });
    }
  });

  it('gives undefined for an event kind it does not know', () => {
    expect(decodeListingEvent(unknownListingEvent('product_5', 2).value)).toBeUndefined();
  });

  it('throws for a malformed product id, a missing version or a listing of another product', () => {
    const encode = (event: Partial<listingV1.ListingEvent>): Uint8Array =>
      listingV1.ListingEvent.encode(listingV1.ListingEvent.fromPartial(event)).finish();
    const listing = listingMessage(6);

    expect(() => decodeListingEvent(encode({ productId: 'p6', version: 1 }))).toThrow('malformed product id');
    expect(() => decodeListingEvent(encode({ productId: 'product_6' }))).toThrow('invalid version');
    expect(() =>
      decodeListingEvent(
        encode({ productId: 'product_7', version: 1, payload: { $case: 'created', value: { listing } } }),
      ),
    ).toThrow('another product');
  });

  it('throws for bytes that are not a ListingEvent', () => {
    expect(() => decodeListingEvent(Uint8Array.from([0xff, 0xff, 0xff]))).toThrow();
  });
});
