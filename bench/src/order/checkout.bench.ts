import { setTimeout as sleep } from 'node:timers/promises';
import type { MarketplaceClient } from '@marketplace/e2e';
import type { Send } from '../catalog/load.js';
import { httpClient } from '../catalog/load.js';
import type { BenchMode } from '../marketplace.js';
import { withMarketplace } from '../marketplace.js';
import { publishListings } from '../publish-listings.js';
import type { LayerOptions } from '../same-run-limit.js';
import { measureLayer, rawHttpLayer, ratioToLimit } from '../same-run-limit.js';
import { StockTally } from './stock-tally.js';

export interface CheckoutBenchOptions extends LayerOptions {
  /** Listings the spread phases buy from (round robin). */
  readonly listings: number;
}

/** Every listing's stock: more than any run sells, so no order is refused for want of it. */
const STOCK = 1_000_000;

/** A buyer's JSON POST with its API key: resolves with the body on `expected`, rejects otherwise. */
const buyerPoster = (baseUrl: string, sockets: number) => {
  const exchange = httpClient(baseUrl, sockets, 15_000);
  return async (path: string, apiKey: string, body: unknown, expected: number): Promise<string> => {
    const answer = await exchange({
      method: 'POST',
      path,
      headers: {
        'x-mcp-api-key': apiKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (answer.status !== expected) throw new Error(`status ${answer.status}: ${answer.text()}`);
    return answer.text();
  };
};
type BuyerPost = ReturnType<typeof buyerPoster>;

/** One order of one unit of `productId` as buyer `n`'s key: its answer's body. */
type Order = (n: number, productId: string) => Promise<string>;

const quickBuyOrder =
  (post: BuyerPost, keyOf: (n: number) => string): Order =>
  (n, productId) =>
    post(
      '/api/mcp/invoke',
      keyOf(n),
      {
        tool: 'quick_buy',
        parameters: { product_id: productId, quantity: 1, buyer_email: 'bench@buyer.example' },
      },
      200,
    );

/** REST checkout: the session, then its completion (two requests per order). */
const restCheckoutOrder =
  (post: BuyerPost, keyOf: (n: number) => string): Order =>
  async (n, productId) => {
    const session = JSON.parse(
      await post(
        '/api/ucp/checkout',
        keyOf(n),
        { line_items: [{ product_id: productId, quantity: 1 }] },
        201,
      ),
    ) as { id: string };
    return post(`/api/ucp/checkout/${session.id}/complete`, keyOf(n), undefined, 200);
  };

const quantityLeft = async (client: MarketplaceClient, productId: string): Promise<number> => {
  const details = await client.request(`/api/ucp/catalog/products/${productId}`);
  return (details.body as { quantity_available: number }).quantity_available;
};

/**
 * Through the API only, so in either mode: for every listing bought from, the stock the catalog shows must
 * equal the stock published less the orders answered, or less up to as many more as requests failed (a
 * timed-out request may still have ordered). Every order of the run counts, the warm-ups' too.
 */
const checkStock = async (client: MarketplaceClient, tally: StockTally) => {
  let listingsWhoseStockDisagrees = 0;
  let failedRequestsThatOrdered = 0;
  for (const listing of tally.listings()) {
    const { atMost, atLeast } = tally.expectedLeft(listing, STOCK);
    // The catalog is a projection: give it a moment to catch up with the last reservations.
    let left = await quantityLeft(client, listing);
    for (let attempt = 0; attempt < 50 && left > atMost; attempt++) {
      await sleep(200);
      left = await quantityLeft(client, listing);
    }
    if (left > atMost || left < atLeast) listingsWhoseStockDisagrees++;
    else failedRequestsThatOrdered += atMost - left;
  }
  const { answered, failed } = tally.totals();
  return {
    ordersAnswered: answered,
    requestsFailed: failed,
    failedRequestsThatOrdered,
    listingsWhoseStockDisagrees,
  };
};

/**
 * Buyers place one-unit orders three ways, each measured at saturation and at half that rate: REST checkout
 * (create + complete, two requests per order) spread over many listings, `quick_buy` through /api/mcp/invoke
 * spread likewise, and `quick_buy` all on one hot listing (every reservation serialised on that listing). Then the
 * same `quick_buy` POSTs against raw node:http answering a real order's JSON (the same-run limit), and the stock
 * each listing shows against the orders its buyers were answered.
 */
export const checkout = (mode: BenchMode, options: CheckoutBenchOptions) =>
  // Checkout needs no semantic search: the catalog starts without its embedding model.
  withMarketplace(mode, { env: { EMBEDDINGS_PROVIDER: 'none' } }, async (marketplace) => {
    const { client, admin } = marketplace;
    const seller = await admin.createAccount('seller', 'Bench Checkout Seller');
    // One after the other: account creation is not what is measured, and a burst of it trips the gateway's pool.
    const buyerKeys: string[] = [];
    for (let n = 0; n < options.concurrency; n++)
      buyerKeys.push((await admin.createAccount('buyer', `Bench Buyer ${n}`)).apiKey);
    const keyOf = (n: number) => buyerKeys[n % buyerKeys.length]!;
    const published = await publishListings(client, seller.apiKey, options.listings + 1, (n) => ({
      name: `Bench checkout lot ${n}`,
      description: 'Generated by the checkout benchmark',
      imageUrl: marketplace.imageUrl('lot'),
      price: 2,
      quantity: STOCK,
      instantCheckout: true,
      promotePublicly: true,
    }));
    const listings = published.slice(0, options.listings);
    const hot = published[options.listings]!;
    const spread = (n: number) => listings[n % listings.length]!;

    const post = buyerPoster(client.baseUrl, options.concurrency * 2);
    const tally = new StockTally();
    const tallied =
      (order: Order, productOf: (n: number) => string): Send =>
      async (n) => {
        const productId = productOf(n);
        await tally.record(productId, order(n, productId));
      };
    const quickBuy = quickBuyOrder(post, keyOf);
    const restCheckout = await measureLayer(tallied(restCheckoutOrder(post, keyOf), spread), options);
    const quickBuySpread = await measureLayer(tallied(quickBuy, spread), options);
    const quickBuyHotListing = await measureLayer(
      tallied(quickBuy, () => hot),
      options,
    );

    const sampleOrder = await tally.record(spread(0), quickBuy(0, spread(0)));
    const rawHttp = await rawHttpLayer(
      sampleOrder,
      (baseUrl) => {
        const rawQuickBuy = quickBuyOrder(buyerPoster(baseUrl, options.concurrency), keyOf);
        return async (n) => void (await rawQuickBuy(n, spread(n)));
      },
      options,
    );
    return {
      ...options,
      restCheckout,
      quickBuySpread,
      quickBuyHotListing,
      quickBuyResponseBytes: Buffer.byteLength(sampleOrder),
      rawHttp,
      // The limit models the quick_buy POST: its ratio is the spread quick_buy phase's.
      ratioToRawHttp: ratioToLimit(quickBuySpread, rawHttp),
      consistency: await checkStock(client, tally),
    };
  });
