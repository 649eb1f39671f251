import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import { createPostgresEventStore, IdempotencyKeys } from '@marketplace/eventsourcing';
import { testImageBytes } from '@marketplace/outbound-http/testing';
import { ManualClock } from '@marketplace/platform';
import { loadPlaceholderImages } from '../src/adapters/placeholder-images.js';
import { listingMigrations } from '../src/adapters/listing.migrations.js';
import { productNumberSequence } from '../src/adapters/product-number.sequence.js';
import type { ListingDependencies } from '../src/application/create-listing.js';
import { createListing } from '../src/application/create-listing.js';
import type { ListingDraft } from '../src/domain/listing.commands.js';
import { TestImages } from './support/test-images.js';
import { SellerListingsTable } from '../src/adapters/seller-listings.table.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe.each(testEngines())('listing images on $name', ({ create }) => {
  const schema = freshSchemaName('listing_images_test');
  let db: Database;
  let images: TestImages;
  let deps: ListingDependencies;
  const publish = (draft: Partial<ListingDraft>) =>
    createListing(deps, {
      sellerAccountId: 7,
      draft: { name: 'Pallet of wireless earbuds', description: 'Customer returns', ...draft },
      actor: { kind: 'seller', id: '7' },
    });

  beforeAll(async () => {
    db = await create();
    images = await TestImages.start();
    await migrate(db, schema, listingMigrations);
    deps = {
      db,
      store: createPostgresEventStore({ db, schema }),
      clock: new ManualClock(NOW),
      allocateProductNumber: productNumberSequence(schema),
      idempotencyKeys: new IdempotencyKeys(db, schema, new ManualClock(NOW)),
      sellerListings: new SellerListingsTable(schema),
      ...images.dependencies(schema),
    };
  });

  afterAll(async () => {
    await images.stop();
    await dropSchema(db, schema);
    await db.close();
  });

  it('re-hosts imageUrl and gallery URLs under /images/<sha256>.<ext> with the bytes and content type', async () => {
    const { listing } = await publish({
      imageUrl: images.server.imageUrl('earbuds'),
      galleryImageUrls: [images.server.imageUrl('earbuds-box'), images.server.imageUrl('earbuds-case')],
    });
    const expected = (name: string) => `/images/${sha256(testImageBytes(name))}.png`;
    expect(listing.imageUrl).toBe(expected('earbuds'));
    expect(listing.galleryImageUrls).toEqual([expected('earbuds-box'), expected('earbuds-case')]);
    const stored = await images.blobs.get(listing.imageUrl!.slice('/images/'.length));
    expect(stored).toEqual({ body: testImageBytes('earbuds'), contentType: 'image/png' });
  });

  it('borrows the image of the listing of the same category with the most similar title when imageUrl is omitted', async () => {
    const headphones = await publish({
      name: 'Studio headphones, over-ear',
      imageUrl: images.server.imageUrl('phones'),
    });
    await publish({
      name: 'Over-ear winter hat',
      category: 'apparel',
      imageUrl: images.server.imageUrl('hat'),
    });
    const { listing } = await publish({ name: 'Refurbished over-ear headphones' });
    expect(listing.imageUrl).toBe(headphones.listing.imageUrl);
  });

  it('falls back to the category’s shipped placeholder, marked as one, and keeps it out of the library', async () => {
    const placeholders = await loadPlaceholderImages(images.blobs);
    expect(new Set(placeholders.values()).size).toBe(placeholders.size);
    const withPlaceholders: ListingDependencies = {
      ...deps,
      images: { ...deps.images, placeholderImage: (category) => placeholders.get(category) },
    };
    const toys = () =>
      createListing(withPlaceholders, {
        sellerAccountId: 7,
        draft: { name: 'Wooden toy trains', description: 'Overstock', category: 'toys' },
        actor: { kind: 'seller', id: '7' },
      });
    const { listing } = await toys();
    expect(listing).toMatchObject({ imageUrl: placeholders.get('toys'), imagePlaceholder: true });
    const key = listing.imageUrl?.replace('/images/', '') ?? '';
    expect((await images.blobs.get(key))?.contentType).toBe('image/png');
    // A placeholder is not the seller's picture: the next similar listing gets the placeholder too, not "its" image.
    expect((await toys()).listing).toMatchObject({ imagePlaceholder: true });
  });

  it('answers 400 on imageUrl, asking for it, when there is no similar listing and no placeholder', async () => {
    await expect(publish({ name: 'Garden hoses', category: 'home_goods' })).rejects.toMatchObject({
      kind: 'validation',
      violations: [
        { path: 'imageUrl', message: 'no image of a similar home_goods listing was found: send imageUrl' },
      ],
    });
  });

  it('refuses what is not an image, and addresses the guard refuses, with the field path of each URL', async () => {
    const requestsBefore = images.server.requests();
    await expect(
      publish({
        imageUrl: images.server.notAnImageUrl,
        galleryImageUrls: [images.server.imageUrl('fine'), 'http://169.254.169.254/latest/meta-data'],
      }),
    ).rejects.toMatchObject({
      kind: 'validation',
      violations: [
        { path: 'imageUrl', message: 'is not a jpeg, png, gif or webp image' },
        {
          path: 'galleryImageUrls/1',
          message:
            'points to an address the marketplace does not fetch from (private, loopback or link-local)',
        },
      ],
    });
    expect(images.server.requests()).toBe(requestsBefore + 2);
  });

  it('fetches nothing for a draft the rules refuse', async () => {
    const requestsBefore = images.server.requests();
    await expect(publish({ name: '', imageUrl: images.server.imageUrl('unused') })).rejects.toMatchObject({
      kind: 'validation',
    });
    expect(images.server.requests()).toBe(requestsBefore);
  });
});
