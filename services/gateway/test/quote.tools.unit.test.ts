import { afterEach, describe, expect, it } from '@jest/globals';
import type { quoteV1 } from '@marketplace/proto';
import { notFound } from '@marketplace/platform';
import type { RateLimitStore } from '@marketplace/ratelimit';
import { createMemoryRateLimitStore } from '@marketplace/ratelimit';
import { QuoteRequests } from '../src/contexts/quotes/quote.requests.js';
import {
  claimQuoteTool,
  getQuoteRequestsInput,
  getQuoteRequestsTool,
  getQuoteStatusTool,
  listMyQuotesTool,
  requestQuoteTool,
  respondToQuoteInput,
  respondToQuoteTool,
} from '../src/contexts/quotes/quote.tools.js';
import type { QuoteClient } from '../src/contexts/quotes/quote.client.js';
import type { Principal } from '../src/edge/account.js';
import { rateLimitConfigSchema } from '../src/edge/http/rate-limit.config.js';
import { RateLimiter, rateLimitPoliciesOf } from '../src/edge/http/rate-limit.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const SELLER: Principal = {
  accountId: 7,
  role: 'seller',
  credential: { kind: 'api_key', keyPrefix: 'lmk_sellerxx' },
};
const BUYER: Principal = {
  accountId: 21,
  role: 'buyer',
  credential: { kind: 'agent_token', sessionId: 's', apiKeyPrefix: 'mk_k' },
};

const stored = (request: Partial<quoteV1.QuoteRequest> = {}): quoteV1.QuoteRequest => ({
  quoteRequestId: 5,
  productId: 'product_42',
  sellerAccountId: 7,
  quantity: 500,
  buyer: { email: 'ada@buyer.example', name: '', company: '' },
  buyerAccountId: undefined,
  targetPriceCents: undefined,
  message: '',
  shippingDestination: '',
  status: 'pending',
  response: undefined,
  agreedUnitPriceCents: undefined,
  productName: 'Pallet of chargers',
  listedUnitPriceCents: 1_250,
  currency: 'USD',
  availableQuantity: 480,
  exceedsAvailableStock: true,
  createdAtMs: NOW,
  updatedAtMs: NOW,
  version: 1,
  history: [],
  negotiationState: 'awaiting_seller',
  listingShipping: undefined,
  listingShippingRecorded: true,
  ...request,
});

/** The accounts' own contact details, as the identity service keeps them. */
const identity = {
  contactOf: async (accountId: number) => ({
    email: `account-${accountId}@buyer.example`,
    name: `Account ${accountId}`,
    company: 'Verified Ltd',
  }),
};

/** A quote client that records what it was asked. */
const recordingClient = () => {
  const requests: quoteV1.RequestQuoteRequest[] = [];
  const responses: quoteV1.RespondToQuoteRequest[] = [];
  const claims: quoteV1.ClaimQuoteRequestRequest[] = [];
  const client: QuoteClient = {
    requestQuote: async (request) => {
      requests.push(request);
      return {
        quoteRequest: stored({ quantity: request.quantity, buyerAccountId: request.buyerAccountId }),
        claimToken: request.buyerAccountId === undefined ? 'qct_token' : '',
      };
    },
    claimQuoteRequest: async (request) => {
      claims.push(request);
      return stored({ buyerAccountId: request.buyerAccountId, claimedAtMs: NOW, version: 2 });
    },
    getBuyerQuoteRequest: async (request) => {
      if (request.buyerAccountId !== 21 && request.claimToken !== 'qct_token')
        throw notFound('no such request');
      return stored({
        quoteRequestId: request.quoteRequestId,
        buyerAccountId: request.buyerAccountId,
        status: 'responded',
        response: {
          action: 'counter',
          counterPriceCents: 900,
          message: '',
          respondedAtMs: NOW,
          respondedByAccountId: 7,
        },
        agreedUnitPriceCents: 900,
        offerExpiresAtMs: NOW + 1_000,
        negotiationState: 'awaiting_buyer',
        listingShipping: { mode: 'flat_per_order', cents: 15_000, shipFromRegion: undefined },
        history: [
          {
            party: 'seller',
            action: 'counter',
            priceCents: 900,
            message: '',
            atMs: NOW,
            expiresAtMs: NOW + 1_000,
          },
        ],
      });
    },
    listBuyerQuoteRequests: async (request) => ({
      quoteRequests: [stored({ buyerAccountId: request.buyerAccountId })],
      total: 7,
    }),
    listQuoteRequests: async () => ({
      quoteRequests: [stored({ listingShipping: { mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' } })],
      total: 1,
    }),
    respondToQuote: async (request) => {
      responses.push(request);
      return stored({ status: 'responded', agreedUnitPriceCents: request.counterPriceCents });
    },
    respondToCounterOffer: async (request) =>
      stored({ buyerAccountId: request.buyerAccountId, status: 'pending', version: 3 }),
    countQuoteRequestsSince: async () => 0,
    close: () => undefined,
  };
  return { client, requests, responses, claims };
};

describe('quote tools', () => {
  let store: RateLimitStore;
  afterEach(async () => {
    await store.close();
  });
  const limiter = (env: Record<string, string>) => {
    store = createMemoryRateLimitStore();
    return new RateLimiter(store, rateLimitPoliciesOf(rateLimitConfigSchema.parse(env)), () => NOW);
  };

  it("request_quote files a verified buyer under the account's own details, whatever the input says", async () => {
    const { client, requests } = recordingClient();
    const tool = requestQuoteTool(new QuoteRequests(client, identity), limiter({}));
    const answer = await tool.handler(BUYER, {
      product_id: 'product_42',
      quantity: 500,
      buyer_email: 'ada@buyer.example',
      buyer_name: 'Ada',
      target_price: 1_000,
    });
    expect(requests[0]).toMatchObject({
      actor: { kind: 'buyer', id: '21' },
      buyerAccountId: 21,
      buyer: { email: 'account-21@buyer.example', name: 'Account 21', company: 'Verified Ltd' },
      targetPriceCents: 1_000,
    });
    expect(answer).toEqual({
      quote_request_id: 5,
      status: 'pending',
      product_id: 'product_42',
      quantity: 500,
      exceeds_available_stock: true,
      expected_response: '24-48 hours',
      created_at: new Date(NOW).toISOString(),
    });
    expect(tool.outputSchema.safeParse(answer).success).toBe(true);
  });

  it('request_quote answers an anonymous caller the claim token, with what it typed', async () => {
    const { client, requests } = recordingClient();
    const tool = requestQuoteTool(new QuoteRequests(client, identity), limiter({}));
    const answer = await tool.handler(undefined, {
      product_id: 'product_42',
      quantity: 500,
      buyer_email: 'ada@buyer.example',
      buyer_name: 'Ada',
    });
    expect(requests[0]).toMatchObject({ buyer: { email: 'ada@buyer.example', name: 'Ada' } });
    expect(requests[0]?.buyerAccountId).toBeUndefined();
    expect(answer).toMatchObject({ quote_request_id: 5, claim_token: 'qct_token' });
    expect(tool.outputSchema.safeParse(answer).success).toBe(true);
  });

  it('claim_quote claims as the calling buyer and refuses sellers and anonymous callers', async () => {
    const { client, claims } = recordingClient();
    const tool = claimQuoteTool(new QuoteRequests(client, identity));
    const answer = await tool.handler(BUYER, { quote_request_id: 5, claim_token: 'qct_token' });
    expect(claims[0]).toMatchObject({ buyerAccountId: 21, quoteRequestId: 5, claimToken: 'qct_token' });
    expect(answer).toMatchObject({ quote_request_id: 5, claimed_at: new Date(NOW).toISOString() });
    expect(tool.outputSchema.safeParse(answer).success).toBe(true);
    await expect(tool.handler(SELLER, { quote_request_id: 5, claim_token: 't' })).rejects.toMatchObject({
      kind: 'forbidden',
    });
    await expect(tool.handler(undefined, { quote_request_id: 5, claim_token: 't' })).rejects.toMatchObject({
      kind: 'unauthenticated',
    });
  });

  it('get_quote_status shows the answer, the expiry and how to buy, to the owner or the token holder', async () => {
    const clock = { now: NOW };
    const tool = getQuoteStatusTool(new QuoteRequests(recordingClient().client, identity, () => clock.now));
    const mine = await tool.handler(BUYER, { quote_request_id: 5 });
    expect(mine).toMatchObject({
      status: 'responded',
      response: { action: 'counter', counter_price: 900, message: null },
      agreed_price: 900,
      offer_expires_at: new Date(NOW + 1_000).toISOString(),
      how_to_buy: expect.stringMatching(/quote_request_id: 5.*used once/),
    });
    // The freight terms the buyer saw when asking, as product details show them.
    expect(mine.shipping).toEqual({ mode: 'flat_per_order', cents: 15_000 });
    expect(tool.outputSchema.safeParse(mine).success).toBe(true);
    const byToken = await tool.handler(undefined, { quote_request_id: 5, claim_token: 'qct_token' });
    expect(byToken.how_to_buy).toMatch(/^Claim it for your buyer account first/);
    clock.now = NOW + 1_000;
    expect((await tool.handler(BUYER, { quote_request_id: 5 })).how_to_buy).toMatch(/expired/);
    await expect(tool.handler(undefined, { quote_request_id: 5 })).rejects.toMatchObject({
      kind: 'unauthenticated',
    });
    await expect(tool.handler(SELLER, { quote_request_id: 5 })).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('list_my_quotes pages through the calling account’s requests', async () => {
    const tool = listMyQuotesTool(new QuoteRequests(recordingClient().client, identity));
    const input = tool.inputSchema.parse({});
    expect(input).toEqual({ status: 'all', limit: 50, offset: 0 });
    const page = await tool.handler(BUYER, input);
    expect(page).toMatchObject({
      total: 7,
      quote_requests: [{ quote_request_id: 5, how_to_buy: expect.any(String), shipping: null }],
    });
    expect(tool.outputSchema.safeParse(page).success).toBe(true);
    expect(tool.inputSchema.safeParse({ limit: 201 }).success).toBe(false);
  });

  it('request_quote counts anonymous callers per email on every transport', async () => {
    const tool = requestQuoteTool(
      new QuoteRequests(recordingClient().client, identity),
      limiter({ RATE_LIMIT_QUOTES_PER_EMAIL: '1' }),
    );
    const input = { product_id: 'product_42', quantity: 1, buyer_email: 'ada@buyer.example' };
    await tool.handler(undefined, input);
    await expect(tool.handler(undefined, input)).rejects.toMatchObject({ kind: 'rate_limited' });
  });

  it('respond_to_quote needs counter_price to counter and refuses it otherwise; status defaults to pending', () => {
    const paths = (input: unknown) =>
      respondToQuoteInput.safeParse(input).error?.issues.map((issue) => issue.path.join('/')) ?? [];
    expect(paths({ quote_request_id: 5, action: 'counter' })).toEqual(['counter_price']);
    expect(paths({ quote_request_id: 5, action: 'accept', counter_price: 900 })).toEqual(['counter_price']);
    expect(paths({ quote_request_id: 0, action: 'haggle' }).sort()).toEqual(['action', 'quote_request_id']);
    expect(paths({ quote_request_id: 5, action: 'counter', counter_price: 900 })).toEqual([]);
    expect(getQuoteRequestsInput.parse({})).toEqual({ status: 'pending' });
    expect(getQuoteRequestsInput.safeParse({ status: 'archived' }).success).toBe(false);
  });

  it('respond_to_quote acts as the calling seller and refuses anyone else', async () => {
    const { client, responses } = recordingClient();
    const tool = respondToQuoteTool(new QuoteRequests(client, identity));
    const answer = await tool.handler(SELLER, {
      quote_request_id: 5,
      action: 'counter',
      counter_price: 1_100,
    });
    expect(responses[0]).toMatchObject({
      sellerAccountId: 7,
      actor: { kind: 'seller', id: '7' },
      counterPriceCents: 1_100,
    });
    expect(answer).toMatchObject({ status: 'responded', agreed_price: 1_100, buyer_verified: false });
    expect(tool.outputSchema.safeParse(answer).success).toBe(true);
    await expect(tool.handler(BUYER, { quote_request_id: 5, action: 'accept' })).rejects.toMatchObject({
      kind: 'forbidden',
    });
    await expect(tool.handler(undefined, { quote_request_id: 5, action: 'accept' })).rejects.toMatchObject({
      kind: 'unauthenticated',
    });
  });

  it('get_quote_requests shows the seller the freight terms the buyer saw', async () => {
    const tool = getQuoteRequestsTool(new QuoteRequests(recordingClient().client, identity));
    const page = await tool.handler(SELLER, { status: 'pending' });
    expect(page.quote_requests[0]?.shipping).toEqual({ mode: 'buyer_pickup', ship_from_region: 'Reno, NV' });
    expect(tool.outputSchema.safeParse(page).success).toBe(true);
  });
});
