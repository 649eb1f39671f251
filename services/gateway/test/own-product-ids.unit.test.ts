import { describe, expect, it } from '@jest/globals';
import { listingV1 } from '@marketplace/proto';
import type { ListingClient } from '../src/contexts/listings/listing.client.js';
import { listingsContext } from '../src/contexts/listings/index.js';
import type { EdgeServices } from '../src/edge/context.js';
import type { Principal } from '../src/edge/account.js';
import { ProductViews } from '../src/edge/product.views.js';

const seller: Principal = {
  accountId: 3,
  role: 'seller',
  credential: { kind: 'api_key', keyPrefix: 'lmk_abc' },
};
const otherSeller: Principal = {
  accountId: 8,
  role: 'seller',
  credential: { kind: 'api_key', keyPrefix: 'lmk_x' },
};
const buyer: Principal = {
  accountId: 4,
  role: 'buyer',
  credential: { kind: 'agent_token', sessionId: 's', apiKeyPrefix: 'mk_k' },
};

/** Answers ListSellerListings from listings owned by two sellers, filtered by the requested seller as the service does. */
const ownedListings = () => {
  const requests: listingV1.ListSellerListingsRequest[] = [];
  const listings = [
    listingV1.Listing.fromPartial({
      productId: 'product_1',
      sellerAccountId: 3,
      name: 'a',
      category: 'tools',
    }),
    listingV1.Listing.fromPartial({
      productId: 'product_2',
      sellerAccountId: 8,
      name: 'b',
      category: 'tools',
    }),
    listingV1.Listing.fromPartial({
      productId: 'product_3',
      sellerAccountId: 3,
      name: 'c',
      category: 'tools',
    }),
  ];
  const client = {
    listSellerListings: async (request: listingV1.ListSellerListingsRequest) => {
      requests.push(request);
      const mine = listings.filter((listing) => listing.sellerAccountId === request.sellerAccountId);
      return { listings: mine, total: mine.length, nextCursor: '' };
    },
  } as unknown as ListingClient;
  // Only the pieces the routes need at construction; the completions path reads listings through `views` alone.
  const edge = {
    views: new ProductViews('https://market.test'),
    bodyLimitBytes: 1_000_000,
  } as unknown as EdgeServices;
  return { context: listingsContext(edge, client), requests };
};

describe('ownProductIds (completion/complete product ids)', () => {
  it("offers a seller only its own product ids, asked for by the caller's own account", async () => {
    const { context, requests } = ownedListings();
    expect(await context.ownProductIds(seller)).toEqual(['product_1', 'product_3']);
    expect(await context.ownProductIds(otherSeller)).toEqual(['product_2']);
    expect(requests.map((request) => request.sellerAccountId)).toEqual([3, 8]);
  });

  it('offers a buyer nothing without asking the listing service', async () => {
    const { context, requests } = ownedListings();
    expect(await context.ownProductIds(buyer)).toEqual([]);
    expect(requests).toEqual([]);
  });
});
