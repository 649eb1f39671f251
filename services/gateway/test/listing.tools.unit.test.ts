import { describe, expect, it } from '@jest/globals';
import { listingV1 } from '@marketplace/proto';
import { AppError, validationError } from '@marketplace/platform';
import type { ListingClient } from '../src/contexts/listings/listing.client.js';
import { ListingCommands } from '../src/contexts/listings/listing.commands.js';
import { ProductViews } from '../src/edge/product.views.js';
import {
  bulkUpdateListingsInput,
  bulkUpdateListingsOutput,
  bulkUpsertListingsInput,
  bulkUpsertListingsTool,
  bulkUpdateListingsTool,
  createListingInput,
  createListingTool,
} from '../src/contexts/listings/listing.tools.js';
import { productDetailsOutput } from '../src/edge/product.views.js';
import { bulkUpsertOutput } from '../src/contexts/listings/bulk-upsert.js';
import type { Principal } from '../src/edge/account.js';

const seller: Principal = {
  accountId: 3,
  role: 'seller',
  credential: { kind: 'api_key', keyPrefix: 'lmk_abc' },
};
const buyer: Principal = {
  accountId: 4,
  role: 'buyer',
  credential: { kind: 'agent_token', sessionId: 's', apiKeyPrefix: 'mk_k' },
};

const listingOf = (request: listingV1.CreateListingRequest): listingV1.Listing => ({
  productId: 'product_9',
  sellerAccountId: request.sellerAccountId,
  name: request.draft?.name ?? '',
  description: request.draft?.description ?? '',
  sku: 'SKU-9',
  category: request.draft?.category ?? 'electronics',
  condition: request.draft?.condition ?? '',
  priceCents: request.draft?.priceCents ?? 100,
  currency: 'USD',
  quantity: request.draft?.quantity ?? 1,
  minOrderQuantity: 1,
  minQuoteQuantity: 1,
  brand: '',
  imageUrl: '/images/abc.png',
  galleryImageUrls: [],
  promotePublicly: false,
  originalRetailPriceCents: request.draft?.originalRetailPriceCents,
  instantCheckout: false,
  createdAtMs: 0,
  updatedAtMs: 0,
  confirmedAtMs: 0,
  version: 1,
  imagePlaceholder: false,
  shipping: undefined,
});

/** A listing client that records what the tools send and answers like the listing service. */
const recordingClient = (failWith?: AppError) => {
  const sent: {
    create: listingV1.CreateListingRequest[];
    bulk: listingV1.BulkUpdateListingsRequest[];
    upsert: listingV1.BulkUpsertListingsRequest[];
  } = { create: [], bulk: [], upsert: [] };
  const client: ListingClient = {
    createListing: async (request) => {
      sent.create.push(request);
      if (failWith) throw failWith;
      return listingOf(request);
    },
    bulkUpdateListings: async (request) => {
      sent.bulk.push(request);
      return {
        updated: [],
        failures: request.productIds.map((productId) => ({
          productId,
          reason: 'not_found',
          message: 'theirs',
        })),
      };
    },
    setListingShipping: async () => {
      throw new Error('not used');
    },
    updateListing: async () => {
      throw new Error('not used');
    },
    setQuantity: async () => {
      throw new Error('not used');
    },
    getListing: async () => {
      throw new Error('not used');
    },
    listSellerListings: async () => {
      throw new Error('not used');
    },
    withdrawListing: async () => {
      throw new Error('not used');
    },
    relistListing: async () => {
      throw new Error('not used');
    },
    bulkUpsertListings: async (request) => {
      sent.upsert.push(request);
      return {
        outcomes: request.items.map(({ index }) => ({
          index,
          status: listingV1.BulkUpsertStatus.BULK_UPSERT_STATUS_CREATED,
          productId: `product_${100 + index}`,
          version: 1,
          message: '',
          violations: [],
        })),
      };
    },
    close: () => undefined,
  };
  return { sent, commands: new ListingCommands(client, new ProductViews('https://market.test')) };
};

const valid = {
  name: 'Pallet of kettles',
  category: 'kitchenware',
  condition: 'overstock',
  quantity: 40,
  price_per_unit: 1_250,
};

describe('create_listing', () => {
  it('requires the parameters of docs/specification.md, "MCP tools" and names the offending ones', () => {
    const result = createListingInput.safeParse({
      ...valid,
      price_per_unit: 12.5,
      quantity: 0,
      category: 'x',
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map(({ path }) => path.join('/')).sort()).toEqual([
      'category',
      'price_per_unit',
      'quantity',
    ]);
  });

  it('publishes in cents under the seller, the name standing in for a missing description', async () => {
    const { sent, commands } = recordingClient();
    const input = createListingInput.parse({ ...valid, original_retail_price: 2_999 });
    const product = await createListingTool(commands).handler(seller, input);
    expect(sent.create[0]).toMatchObject({
      sellerAccountId: 3,
      actor: { kind: 'seller', id: '3' },
      draft: {
        name: 'Pallet of kettles',
        description: 'Pallet of kettles',
        priceCents: 1_250,
        originalRetailPriceCents: 2_999,
        quantity: 40,
        category: 'kitchenware',
        condition: 'overstock',
        promotePublicly: false,
      },
    });
    expect(productDetailsOutput.parse(product)).toMatchObject({ id: 'product_9', price: 1_250 });
  });

  it("reports the listing service's violations under the tool's field names", async () => {
    const failure = validationError('invalid listing', [
      { path: 'price', message: 'must be at most $10,000,000' },
      { path: 'originalRetailPrice', message: 'must be greater than 0' },
    ]);
    const { commands } = recordingClient(failure);
    const call = createListingTool(commands).handler(seller, createListingInput.parse(valid));
    await expect(call).rejects.toMatchObject({
      kind: 'validation',
      violations: [
        { path: 'price_per_unit', message: 'must be at most $10,000,000' },
        { path: 'original_retail_price', message: 'must be greater than 0' },
      ],
    });
  });

  it('is for sellers only', async () => {
    const { commands } = recordingClient();
    await expect(
      createListingTool(commands).handler(buyer, createListingInput.parse(valid)),
    ).rejects.toMatchObject({
      kind: 'forbidden',
    });
    await expect(
      createListingTool(commands).handler(undefined, createListingInput.parse(valid)),
    ).rejects.toMatchObject({ kind: 'unauthenticated' });
  });
});

describe('bulk_update_listings', () => {
  it('takes 1 to 200 product numbers and one of the four modes', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    expect(
      bulkUpdateListingsInput.safeParse({ product_ids: ids(200), mode: 'moq_set', value: 2 }).success,
    ).toBe(true);
    for (const input of [
      { product_ids: ids(201), mode: 'moq_set', value: 2 },
      { product_ids: [], mode: 'moq_set', value: 2 },
      { product_ids: [0], mode: 'moq_set', value: 2 },
      { product_ids: ['product_1'], mode: 'moq_set', value: 2 },
      { product_ids: [1], mode: 'price_double', value: 2 },
      { product_ids: [1], mode: 'price_set' },
    ]) {
      expect(bulkUpdateListingsInput.safeParse(input).success).toBe(false);
    }
  });

  it('sends product ids and the mode, and reports the listings left untouched', async () => {
    const { sent, commands } = recordingClient();
    const input = bulkUpdateListingsInput.parse({
      product_ids: [7, 8],
      mode: 'price_percent_decrease',
      value: 15,
    });
    const outcome = await bulkUpdateListingsTool(commands).handler(seller, input);
    expect(sent.bulk[0]).toMatchObject({
      sellerAccountId: 3,
      productIds: ['product_7', 'product_8'],
      mode: listingV1.BulkUpdateMode.BULK_UPDATE_MODE_PRICE_PERCENT_DECREASE,
      value: 15,
    });
    expect(bulkUpdateListingsOutput.parse(outcome)).toEqual({
      updated: [],
      failures: [
        { product_id: 'product_7', reason: 'not_found', message: 'theirs' },
        { product_id: 'product_8', reason: 'not_found', message: 'theirs' },
      ],
    });
    await expect(bulkUpdateListingsTool(commands).handler(buyer, input)).rejects.toBeInstanceOf(AppError);
  });
});

describe('bulk_upsert_listings', () => {
  const item = { name: 'Pallet of kettles', description: '40 units', sku: 'K-40', price: 12.5, quantity: 40 };

  it('refuses a bad item in its own result, sends the others with the fields each sent, in cents', async () => {
    const { sent, commands } = recordingClient();
    const input = bulkUpsertListingsInput.parse({
      mode: 'upsert_by_sku',
      items: [
        item,
        { ...item, sku: 'K-41', price: -1, colour: 'red' },
        { name: 'Kettle', description: 'one', sku: 'K-42' },
      ],
      idempotency_key: 'sync-1',
    });
    const answer = await bulkUpsertListingsTool(commands).handler(seller, input);
    expect(sent.upsert[0]).toMatchObject({
      sellerAccountId: 3,
      mode: listingV1.BulkUpsertMode.BULK_UPSERT_MODE_UPSERT_BY_SKU,
      idempotencyKey: 'sync-1',
      items: [
        {
          index: 0,
          draft: expect.objectContaining({ sku: 'K-40', priceCents: 1_250, quantity: 40 }),
          fields: ['name', 'description', 'sku', 'priceCents', 'quantity'],
        },
        { index: 2, fields: ['name', 'description', 'sku'] },
      ],
    });
    expect(bulkUpsertOutput.parse(answer)).toEqual({
      results: [
        { index: 0, status: 'created', product_id: 'product_100', version: 1 },
        {
          index: 1,
          status: 'error',
          message: 'invalid item',
          errors: expect.arrayContaining([
            { field: 'price', message: 'must be greater than 0' },
            { field: 'colour', message: 'is not a known field' },
          ]),
        },
        { index: 2, status: 'created', product_id: 'product_102', version: 1 },
      ],
      summary: { created: 2, updated: 0, unchanged: 0, error: 1 },
    });
  });

  it('takes 1 to 1,000 items and one of the two modes, and is for sellers only', async () => {
    expect(bulkUpsertListingsInput.safeParse({ mode: 'create', items: [] }).success).toBe(false);
    expect(
      bulkUpsertListingsInput.safeParse({ mode: 'create', items: Array(1_001).fill(item) }).success,
    ).toBe(false);
    expect(bulkUpsertListingsInput.safeParse({ mode: 'merge', items: [item] }).success).toBe(false);
    const { sent, commands } = recordingClient();
    const input = bulkUpsertListingsInput.parse({ mode: 'create', items: [item] });
    await expect(bulkUpsertListingsTool(commands).handler(buyer, input)).rejects.toBeInstanceOf(AppError);
    expect(sent.upsert).toHaveLength(0);
  });
});
