import { describe, it } from '@jest/globals';
import { DeciderSpecification } from '@marketplace/eventsourcing';
import { AppError } from '@marketplace/platform';
import type {
  CreateListing,
  ListingDraft,
  SetListingShipping,
  ShippingDraft,
} from '../src/domain/listing.commands.js';
import { InsufficientStockError, listingDecider } from '../src/domain/listing.decider.js';
import { validateNewListing } from '../src/domain/listing.rules.js';
import type {
  Listing,
  ListingCreated,
  ListingShipping,
  ListingShippingSet,
} from '../src/domain/listing.events.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const spec = DeciderSpecification.for(listingDecider);

const createListing = (draft: ListingDraft, productId = 'product_42'): CreateListing => ({
  type: 'CreateListing',
  data: { productId, accepted: validateNewListing(7, draft) },
  metadata: { now: NOW, actor: { kind: 'seller', id: '7' } },
});

const draft: ListingDraft = { name: 'Pallet of USB-C chargers', description: '480 units, 65 W, boxed' };

const created = (listing: Partial<Listing> = {}): ListingCreated => ({
  type: 'ListingCreated',
  data: {
    listing: {
      productId: 'product_42',
      sellerAccountId: 7,
      name: 'Pallet of USB-C chargers',
      description: '480 units, 65 W, boxed',
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
      ...listing,
    },
  },
});

const isAppErrorOfKind =
  (kind: AppError['kind']) =>
  (error: unknown): boolean =>
    error instanceof AppError && error.kind === kind;

describe('listing decider', () => {
  it('creates a listing with the defaults, a sku from the product number and the command time', () => {
    spec.given([]).when(createListing(draft)).then([created()]);
  });

  it("keeps the seller's own sku and image URLs as given", () => {
    const gallery = ['https://img.example.com/1.jpg'];
    spec
      .given([])
      .when(
        createListing({
          ...draft,
          sku: 'CHG-65',
          imageUrl: 'https://img.example.com/0.jpg',
          galleryImageUrls: gallery,
        }),
      )
      .then([
        created({ sku: 'CHG-65', imageUrl: 'https://img.example.com/0.jpg', galleryImageUrls: gallery }),
      ]);
  });

  it('refuses to create a listing that already exists', () => {
    spec.given([created()]).when(createListing(draft)).thenThrows(isAppErrorOfKind('conflict'));
  });
});

describe('listing decider after creation', () => {
  const LATER = NOW + 60_000;
  const metadata = { now: LATER, actor: { kind: 'seller', id: '7' } } as const;
  const listed = created({ quantity: 10 }).data.listing;

  it('updates the fields sent, names them, and confirms availability', () => {
    spec
      .given([created({ quantity: 10 })])
      .when({
        type: 'UpdateListing',
        data: {
          productId: 'product_42',
          sellerAccountId: 7,
          changes: { priceCents: 250, name: listed.name },
        },
        metadata,
      })
      .then([
        {
          type: 'ListingUpdated',
          data: {
            listing: { ...listed, priceCents: 250, updatedAt: LATER, confirmedAt: LATER },
            changedFields: ['price'],
          },
        },
      ]);
  });

  it('takes what a create takes: stock as the quantity endpoint sets it, and the re-hosted images', () => {
    spec
      .given([created({ quantity: 10, imageUrl: '/images/old.png' })])
      .when({
        type: 'UpdateListing',
        data: {
          productId: 'product_42',
          sellerAccountId: 7,
          changes: {
            quantity: 0,
            imageUrl: 'https://img.example/new.png',
            galleryImageUrls: ['https://img.example/g.png'],
          },
          hostedImages: { imageUrl: '/images/new.png', galleryImageUrls: ['/images/g.png'] },
        },
        metadata,
      })
      .then([
        {
          type: 'ListingUpdated',
          data: {
            listing: {
              ...listed,
              quantity: 0,
              imageUrl: '/images/new.png',
              galleryImageUrls: ['/images/g.png'],
              updatedAt: LATER,
              confirmedAt: LATER,
            },
            changedFields: ['quantity', 'imageUrl', 'galleryImageUrls'],
          },
        },
      ]);
  });

  it('names no field when the same stock and images come again, and checks the minimum against new stock', () => {
    spec
      .given([created({ quantity: 10, imageUrl: '/images/same.png', galleryImageUrls: ['/images/g.png'] })])
      .when({
        type: 'UpdateListing',
        data: {
          productId: 'product_42',
          sellerAccountId: 7,
          changes: {
            quantity: 10,
            imageUrl: 'https://img.example/same.png',
            galleryImageUrls: ['https://x.example/g'],
          },
          hostedImages: { imageUrl: '/images/same.png', galleryImageUrls: ['/images/g.png'] },
        },
        metadata,
      })
      .then([
        {
          type: 'ListingUpdated',
          data: {
            listing: {
              ...listed,
              imageUrl: '/images/same.png',
              galleryImageUrls: ['/images/g.png'],
              updatedAt: LATER,
              confirmedAt: LATER,
            },
            changedFields: [],
          },
        },
      ]);
    spec
      .given([created({ quantity: 10 })])
      .when({
        type: 'UpdateListing',
        data: { productId: 'product_42', sellerAccountId: 7, changes: { quantity: 5, minOrderQuantity: 6 } },
        metadata,
      })
      .thenThrows(isAppErrorOfKind('validation'));
  });

  it('withdraws once, refuses reservations while withdrawn, and relists as a confirmation', () => {
    const status = (type: 'WithdrawListing' | 'RelistListing', sellerAccountId = 7) =>
      ({ type, data: { productId: 'product_42', sellerAccountId }, metadata }) as const;
    const withdrawnListing = { ...listed, withdrawnAt: LATER, updatedAt: LATER };
    const withdrawn = { type: 'ListingWithdrawn', data: { listing: withdrawnListing } } as const;
    spec
      .given([created({ quantity: 10 })])
      .when(status('WithdrawListing'))
      .then([withdrawn]);
    spec
      .given([created({ quantity: 10 }), withdrawn])
      .when(status('WithdrawListing'))
      .then([]);
    spec
      .given([created({ quantity: 10 })])
      .when(status('RelistListing'))
      .then([]);
    spec
      .given([created({ quantity: 10 }), withdrawn])
      .when(status('RelistListing'))
      .then([
        {
          type: 'ListingRelisted',
          data: { listing: { ...listed, updatedAt: LATER, confirmedAt: LATER } },
        },
      ]);
    spec
      .given([created({ quantity: 10 })])
      .when(status('WithdrawListing', 8))
      .thenThrows(isAppErrorOfKind('not_found'));
    spec
      .given([created({ quantity: 10 }), withdrawn])
      .when({
        type: 'ReserveStock',
        data: { productId: 'product_42', reservationId: 'order-1', quantity: 1 },
        metadata,
      })
      .thenThrows(isAppErrorOfKind('conflict'));
  });

  it("refuses another seller's listing and a listing that does not exist alike (not found, same words)", () => {
    const update = (sellerAccountId: number) =>
      ({
        type: 'UpdateListing',
        data: { productId: 'product_42', sellerAccountId, changes: { priceCents: 250 } },
        metadata,
      }) as const;
    const missing = (error: unknown) =>
      isAppErrorOfKind('not_found')(error) &&
      (error as Error).message === 'listing product_42 does not exist';
    spec.given([created()]).when(update(8)).thenThrows(missing);
    spec.given([]).when(update(7)).thenThrows(missing);
  });

  it('sets the stock to 0 (sold out)', () => {
    spec
      .given([created({ quantity: 10 })])
      .when({
        type: 'SetQuantity',
        data: { productId: 'product_42', sellerAccountId: 7, quantity: 0 },
        metadata,
      })
      .then([
        {
          type: 'ListingQuantitySet',
          data: { listing: { ...listed, quantity: 0, updatedAt: LATER, confirmedAt: LATER } },
        },
      ]);
  });

  const reserve = (reservationId: string, quantity: number) =>
    ({ type: 'ReserveStock', data: { productId: 'product_42', reservationId, quantity }, metadata }) as const;
  const reserved = (reservationId: string, quantity: number, left: number) =>
    ({
      type: 'StockReserved',
      data: { listing: { ...listed, quantity: left, updatedAt: LATER }, reservationId, quantity },
    }) as const;

  it('reserves stock without confirming availability, and never below zero', () => {
    spec
      .given([created({ quantity: 10 })])
      .when(reserve('o-1', 4))
      .then([reserved('o-1', 4, 6)]);
    spec
      .given([created({ quantity: 10 }), reserved('o-1', 4, 6)])
      .when(reserve('o-2', 7))
      .thenThrows((error) => error instanceof InsufficientStockError && error.available === 6);
  });

  it('answers a repeated reservation with nothing new, and releases a reservation once', () => {
    const history = [created({ quantity: 10 }), reserved('o-1', 4, 6)];
    spec.given(history).when(reserve('o-1', 4)).then([]);
    spec.given(history).when(reserve('o-1', 5)).thenThrows(isAppErrorOfKind('conflict'));
    const release = {
      type: 'ReleaseStock',
      data: { productId: 'product_42', reservationId: 'o-1' },
      metadata,
    } as const;
    const released = {
      type: 'StockReleased',
      data: { listing: { ...listed, quantity: 10, updatedAt: LATER }, reservationId: 'o-1', quantity: 4 },
    } as const;
    spec.given(history).when(release).then([released]);
    spec
      .given([...history, released])
      .when(release)
      .then([]);
    spec
      .given([...history, released])
      .when(reserve('o-1', 4))
      .thenThrows(isAppErrorOfKind('conflict'));
  });
});

describe('listing decider: freight terms (docs/specification.md, "Checkout and orders")', () => {
  const LATER = NOW + 60_000;
  const metadata = { now: LATER, actor: { kind: 'seller', id: '7' } } as const;
  const listed = created().data.listing;
  const setShipping = (shipping: ShippingDraft, sellerAccountId = 7): SetListingShipping => ({
    type: 'SetListingShipping',
    data: { productId: 'product_42', sellerAccountId, shipping },
    metadata,
  });
  const shippingSet = (shipping: ListingShipping): ListingShippingSet => ({
    type: 'ListingShippingSet',
    data: { listing: { ...listed, shipping, updatedAt: LATER } },
  });
  const violationsOf = (check: (paths: string[]) => boolean) => (error: unknown) =>
    error instanceof AppError &&
    error.kind === 'validation' &&
    check((error.violations ?? []).map(({ path }) => path));

  it('sets each mode with what it takes, without confirming availability', () => {
    const modes: [ShippingDraft, ListingShipping][] = [
      [{ mode: 'included' }, { mode: 'included' }],
      [
        { mode: 'flat_per_order', cents: 15_000 },
        { mode: 'flat_per_order', cents: 15_000 },
      ],
      [
        { mode: 'per_unit', cents: 250 },
        { mode: 'per_unit', cents: 250 },
      ],
      [
        { mode: 'buyer_pickup', shipFromRegion: ' Reno, NV ' },
        { mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' },
      ],
      [{ mode: 'quoted_on_request' }, { mode: 'quoted_on_request' }],
    ];
    for (const [draft, shipping] of modes) {
      spec
        .given([created()])
        .when(setShipping(draft))
        .then([shippingSet(shipping)]);
    }
  });

  it('changes nothing when the same terms come again, and replaces other terms', () => {
    const flat = shippingSet({ mode: 'flat_per_order', cents: 15_000 });
    spec
      .given([created(), flat])
      .when(setShipping({ mode: 'flat_per_order', cents: 15_000 }))
      .then([]);
    spec
      .given([created(), flat])
      .when(setShipping({ mode: 'flat_per_order', cents: 20_000 }))
      .then([shippingSet({ mode: 'flat_per_order', cents: 20_000 })]);
  });

  it('names the field: an unknown mode, missing or bad cents, a field the mode does not use, no region', () => {
    const given = spec.given([created()]);
    given.when(setShipping({ mode: 'air_mail' })).thenThrows(violationsOf((p) => p.includes('mode')));
    given.when(setShipping({ mode: 'per_unit' })).thenThrows(violationsOf((p) => p.includes('cents')));
    given
      .when(setShipping({ mode: 'flat_per_order', cents: -5 }))
      .thenThrows(violationsOf((p) => p.includes('cents')));
    given
      .when(setShipping({ mode: 'per_unit', cents: 1.5 }))
      .thenThrows(violationsOf((p) => p.includes('cents')));
    given
      .when(setShipping({ mode: 'included', cents: 100 }))
      .thenThrows(violationsOf((p) => p.includes('cents')));
    given
      .when(setShipping({ mode: 'buyer_pickup', shipFromRegion: '  ' }))
      .thenThrows(violationsOf((p) => p.includes('shipFromRegion')));
    given
      .when(setShipping({ mode: 'quoted_on_request', shipFromRegion: 'Reno, NV' }))
      .thenThrows(violationsOf((p) => p.includes('shipFromRegion')));
  });

  it("refuses another seller's listing and a listing that does not exist", () => {
    spec
      .given([created()])
      .when(setShipping({ mode: 'included' }, 8))
      .thenThrows(isAppErrorOfKind('not_found'));
    spec
      .given([])
      .when(setShipping({ mode: 'included' }))
      .thenThrows(isAppErrorOfKind('not_found'));
  });
});
