import { describe, it } from '@jest/globals';
import { DeciderSpecification } from '@marketplace/eventsourcing';
import { AppError } from '@marketplace/platform';
import type { CreateListing, ListingDraft } from '../src/domain/listing.commands.js';
import { listingDecider } from '../src/domain/listing.decider.js';
import type { Listing, ListingCreated } from '../src/domain/listing.events.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const spec = DeciderSpecification.for(listingDecider);

const createListing = (draft: ListingDraft, productId = 'product_42'): CreateListing => ({
  type: 'CreateListing',
  data: { productId, sellerAccountId: 7, draft },
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

  it('rejects an invalid draft with a validation error and no event', () => {
    spec
      .given([])
      .when(createListing({ ...draft, name: '' }))
      .thenThrows(
        (error) =>
          isAppErrorOfKind('validation')(error) && (error as AppError).violations[0]?.path === 'name',
      );
  });

  it('refuses to create a listing that already exists', () => {
    spec.given([created()]).when(createListing(draft)).thenThrows(isAppErrorOfKind('conflict'));
  });
});
