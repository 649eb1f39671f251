import type { quoteV1 } from '@marketplace/proto';
import { forbidden, unauthenticated } from '@marketplace/platform';
import type { QuoteAction, QuoteNegotiationState, QuoteStatusFilter } from '@marketplace/vocabulary';
import { isQuoteAction, QUOTE_LIMITS, QUOTE_NEGOTIATION_STATES } from '@marketplace/vocabulary';
import type { z } from 'zod';
import type { buyerQuoteRequestSchema } from './quote-request.schema.js';
import type { QuoteClient } from './quote.client.js';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import type { Principal } from '../../edge/account.js';
import { actorOf, requireSeller } from '../../edge/account.js';
import type { ShippingView } from '../../edge/product.views.js';
import { shippingViewOf } from '../../edge/product.views.js';

/** What a buyer sends, in the gateway's terms (cents, the spec's field names resolved). */
export interface QuoteRequestInput {
  readonly productId: string;
  readonly quantity: number;
  readonly buyer: { readonly email: string; readonly name?: string; readonly company?: string };
  readonly targetPriceCents?: number;
  readonly message?: string;
  /** Where the lot ships to, for the seller's freight price. */
  readonly shippingDestination?: string | undefined;
  /** At most one request per key: a repeat answers the request it filed (scoped by account, else email). */
  readonly idempotencyKey?: string | undefined;
}

/** The answer to a new request (docs/specification.md, "Quotes"). */
export interface SubmittedQuoteRequest {
  readonly quote_request_id: number;
  /** Anonymous requests only: the secret that claims the request for a buyer account. */
  readonly claim_token?: string;
  readonly status: 'pending';
  readonly product_id: string;
  readonly quantity: number;
  readonly exceeds_available_stock: boolean;
  readonly expected_response: string;
  readonly created_at: string;
}

/** A quote request as its seller sees it. */
export interface SellerQuoteRequest {
  readonly quote_request_id: number;
  readonly status: string;
  readonly product_id: string;
  readonly product_name: string;
  readonly quantity: number;
  readonly exceeds_available_stock: boolean;
  readonly available_quantity: number;
  readonly listed_price: number;
  readonly target_price: number | null;
  readonly currency: string;
  readonly buyer: { readonly email: string; readonly name: string | null; readonly company: string | null };
  /** The buyer details are the account's own: asked with an API key or agent token. */
  readonly buyer_verified: boolean;
  readonly message: string | null;
  readonly shipping_destination: string | null;
  /** The listing's freight terms when the buyer asked; null when none were set. */
  readonly shipping: ShippingView | null;
  readonly response: {
    readonly action: string;
    readonly counter_price: number | null;
    readonly message: string | null;
    readonly responded_at: string;
  } | null;
  readonly agreed_price: number | null;
  readonly negotiation_state: QuoteNegotiationState;
  readonly offer_expires_at: string | null;
  readonly history: QuoteStepView[];
  readonly created_at: string;
}

/** One step of the negotiation, as both sides see it. */
export interface QuoteStepView {
  readonly party: 'buyer' | 'seller';
  readonly action: QuoteAction;
  readonly price: number | null;
  readonly message: string | null;
  readonly at: string;
  readonly expires_at: string | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const orNull = <T>(value: T | undefined): T | null => value ?? null;
const textOrNull = (value: string): string | null => (value === '' ? null : value);

/** The seller's answer as both sides see it; null while pending. */
const responseViewOf = ({ response }: quoteV1.QuoteRequest) =>
  response && isQuoteAction(response.action)
    ? {
        action: response.action,
        counter_price: orNull(response.counterPriceCents),
        message: textOrNull(response.message),
        responded_at: iso(response.respondedAtMs),
      }
    : null;

const historyViewOf = (quote: quoteV1.QuoteRequest): QuoteStepView[] =>
  quote.history.flatMap((step) =>
    isQuoteAction(step.action) && (step.party === 'buyer' || step.party === 'seller')
      ? [
          {
            party: step.party,
            action: step.action,
            price: orNull(step.priceCents),
            message: textOrNull(step.message),
            at: iso(step.atMs),
            expires_at: step.expiresAtMs === undefined ? null : iso(step.expiresAtMs),
          },
        ]
      : [],
  );

const negotiationStateOf = (quote: quoteV1.QuoteRequest): QuoteNegotiationState =>
  (QUOTE_NEGOTIATION_STATES as readonly string[]).includes(quote.negotiationState)
    ? (quote.negotiationState as QuoteNegotiationState)
    : quote.status === 'pending'
      ? 'awaiting_seller'
      : quote.agreedUnitPriceCents === undefined
        ? 'declined'
        : 'agreed';

export const sellerViewOf = (quote: quoteV1.QuoteRequest): SellerQuoteRequest => ({
  quote_request_id: quote.quoteRequestId,
  status: quote.status,
  product_id: quote.productId,
  product_name: quote.productName,
  quantity: quote.quantity,
  exceeds_available_stock: quote.exceedsAvailableStock,
  available_quantity: quote.availableQuantity,
  listed_price: quote.listedUnitPriceCents,
  target_price: orNull(quote.targetPriceCents),
  currency: quote.currency,
  buyer: {
    email: quote.buyer?.email ?? '',
    name: textOrNull(quote.buyer?.name ?? ''),
    company: textOrNull(quote.buyer?.company ?? ''),
  },
  // A claimed anonymous request belongs to an account, but its buyer details were typed, not the account's.
  buyer_verified: quote.buyerAccountId !== undefined && quote.claimedAtMs === undefined,
  shipping_destination: textOrNull(quote.shippingDestination),
  shipping: shippingViewOf(quote.listingShipping),
  message: textOrNull(quote.message),
  response: responseViewOf(quote),
  agreed_price: orNull(quote.agreedUnitPriceCents),
  negotiation_state: negotiationStateOf(quote),
  offer_expires_at: quote.offerExpiresAtMs === undefined ? null : iso(quote.offerExpiresAtMs),
  history: historyViewOf(quote),
  created_at: iso(quote.createdAtMs),
});

/** A quote request as its buyer sees it (docs/specification.md, "Quotes"). */
export type BuyerQuoteRequest = z.output<typeof buyerQuoteRequestSchema>;

const howToBuy = (quote: quoteV1.QuoteRequest, now: number): string => {
  const id = quote.quoteRequestId;
  const state = negotiationStateOf(quote);
  if (state === 'awaiting_seller')
    return quote.history.length > 0
      ? "Waiting for the seller's answer to your counter-offer."
      : `Waiting for the seller's answer (usually ${QUOTE_LIMITS.expectedResponse}).`;
  if (state === 'declined')
    return quote.history.at(-1)?.party === 'buyer'
      ? 'You declined the offer; ask again with request_quote.'
      : 'The seller declined; ask another seller or another quantity.';
  if (quote.offerExpiresAtMs !== undefined && quote.offerExpiresAtMs <= now) {
    return 'The agreed price expired; ask again with request_quote.';
  }
  const answer =
    state === 'awaiting_buyer'
      ? 'The seller countered: accept, counter (counter_price) or decline with respond_to_counter_offer ' +
        `(POST /api/ucp/quotes/${id}/respond), or buy at this price directly. `
      : '';
  const claimFirst =
    quote.buyerAccountId === undefined
      ? `Claim it for your buyer account first (claim_quote, or POST /api/ucp/quotes/${id}/claim, with its claim token). `
      : '';
  return (
    `${claimFirst}${answer}Buy at the agreed price: preview_checkout with a line ` +
    `{product_id: "${quote.productId}", quantity: up to ${quote.quantity}, quote_request_id: ${id}}, then ` +
    'confirm_purchase with its confirmation_token (or accept_quote_and_pay in one step). The price is used once.'
  );
};

export const buyerViewOf = (quote: quoteV1.QuoteRequest, now: number): BuyerQuoteRequest => ({
  quote_request_id: quote.quoteRequestId,
  status: quote.status === 'pending' ? 'pending' : 'responded',
  product_id: quote.productId,
  product_name: quote.productName,
  quantity: quote.quantity,
  listed_price: quote.listedUnitPriceCents,
  target_price: orNull(quote.targetPriceCents),
  currency: quote.currency,
  shipping: shippingViewOf(quote.listingShipping),
  response: responseViewOf(quote),
  agreed_price: orNull(quote.agreedUnitPriceCents),
  offer_expires_at: quote.offerExpiresAtMs === undefined ? null : iso(quote.offerExpiresAtMs),
  negotiation_state: negotiationStateOf(quote),
  history: historyViewOf(quote),
  claimed_at: quote.claimedAtMs === undefined ? null : iso(quote.claimedAtMs),
  created_at: iso(quote.createdAtMs),
  how_to_buy: howToBuy(quote, now),
});

/** Quote requests for REST and the MCP tools: one place that decides who may do what. */
export class QuoteRequests {
  constructor(
    private readonly quotes: QuoteClient,
    private readonly identity: Pick<IdentityService, 'contactOf'>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Anyone may ask (docs/specification.md, "Service"). A verified caller (API key or agent token) binds the request to its account, and
   * the request carries the account's own email, name and company, whatever the body says, so what the seller sees
   * as a verified buyer is one (docs/specification.md, "Quotes"). An anonymous request carries what the buyer
   * typed, and its answer a claim token.
   */
  async request(
    caller: Principal | undefined,
    input: QuoteRequestInput,
    correlationId: string,
  ): Promise<SubmittedQuoteRequest> {
    const buyer = caller === undefined ? input.buyer : await this.identity.contactOf(caller.accountId);
    const { quoteRequest: quote, claimToken } = await this.quotes.requestQuote({
      actor: actorOf(caller),
      productId: input.productId,
      quantity: input.quantity,
      buyer: { email: buyer.email, name: buyer.name ?? '', company: buyer.company ?? '' },
      buyerAccountId: caller?.accountId,
      targetPriceCents: input.targetPriceCents,
      message: input.message ?? '',
      shippingDestination: input.shippingDestination ?? '',
      correlationId,
      idempotencyKey: input.idempotencyKey,
    });
    return {
      quote_request_id: quote.quoteRequestId,
      ...(claimToken === '' ? {} : { claim_token: claimToken }),
      status: 'pending',
      product_id: quote.productId,
      quantity: quote.quantity,
      exceeds_available_stock: quote.exceedsAvailableStock,
      expected_response: QUOTE_LIMITS.expectedResponse,
      created_at: iso(quote.createdAtMs),
    };
  }

  /**
   * A buyer account takes an anonymous request with its claim token, so it can check the request out; the token
   * proves the caller asked, or reads the buyer's mailbox. A wrong token reads like an unknown request.
   */
  async claim(
    caller: Principal | undefined,
    input: { readonly quoteRequestId: number; readonly claimToken: string },
    correlationId: string,
  ): Promise<BuyerQuoteRequest> {
    if (caller === undefined)
      throw unauthenticated('a quote request is claimed with a buyer API key or agent token');
    if (caller.role !== 'buyer') throw forbidden('only buyer accounts claim quote requests');
    const quote = await this.quotes.claimQuoteRequest({
      actor: { kind: 'buyer', id: String(caller.accountId) },
      quoteRequestId: input.quoteRequestId,
      buyerAccountId: caller.accountId,
      claimToken: input.claimToken,
      correlationId,
    });
    return buyerViewOf(quote, this.now());
  }

  /**
   * One request as its buyer sees it: the caller's own by account, or an unclaimed anonymous one whose claim
   * token the caller holds. Anything else is 404, like an unknown id.
   */
  async status(
    caller: Principal | undefined,
    input: { readonly quoteRequestId: number; readonly claimToken?: string | undefined },
  ): Promise<BuyerQuoteRequest> {
    if (caller === undefined && input.claimToken === undefined) {
      throw unauthenticated(
        'send the buyer API key or agent token, or the claim token of an anonymous request',
      );
    }
    const quote = await this.quotes.getBuyerQuoteRequest({
      actor: actorOf(caller),
      quoteRequestId: input.quoteRequestId,
      buyerAccountId: caller?.accountId,
      claimToken: input.claimToken ?? '',
    });
    return buyerViewOf(quote, this.now());
  }

  /**
   * The owning buyer account answers the seller's open counter-offer: accept, counter or decline. Another
   * account's request is 404 like an unknown one; not the buyer's turn, or an expired offer, is 409.
   */
  async respondToCounterOffer(
    caller: Principal | undefined,
    input: {
      readonly quoteRequestId: number;
      readonly action: QuoteAction;
      readonly counterPriceCents?: number | undefined;
      readonly message?: string | undefined;
    },
    correlationId: string,
  ): Promise<BuyerQuoteRequest> {
    if (caller === undefined)
      throw unauthenticated('a counter-offer is answered with a buyer API key or agent token');
    if (caller.role !== 'buyer') throw forbidden('only buyer accounts answer counter-offers');
    const quote = await this.quotes.respondToCounterOffer({
      actor: { kind: 'buyer', id: String(caller.accountId) },
      buyerAccountId: caller.accountId,
      quoteRequestId: input.quoteRequestId,
      action: input.action,
      counterPriceCents: input.counterPriceCents,
      message: input.message ?? '',
      correlationId,
    });
    return buyerViewOf(quote, this.now());
  }

  /** The calling account's own contact details, which its orders and quote requests carry. */
  async contactOf(caller: Principal | undefined) {
    if (caller === undefined) throw unauthenticated('a buyer API key or agent token is required');
    return this.identity.contactOf(caller.accountId);
  }

  /** The calling account's own requests (asked with its credential, or claimed), newest first. */
  async listMine(
    caller: Principal | undefined,
    filter: { readonly status: QuoteStatusFilter; readonly limit: number; readonly offset: number },
  ): Promise<{ quote_requests: BuyerQuoteRequest[]; total: number }> {
    if (caller === undefined)
      throw unauthenticated('a buyer lists its quote requests with its API key or agent token');
    const { quoteRequests, total } = await this.quotes.listBuyerQuoteRequests({
      actor: actorOf(caller),
      buyerAccountId: caller.accountId,
      ...filter,
    });
    const now = this.now();
    return { quote_requests: quoteRequests.map((quote) => buyerViewOf(quote, now)), total };
  }

  /** The calling seller's own requests, newest first. */
  async list(
    caller: Principal | undefined,
    status: QuoteStatusFilter,
    limit?: number,
  ): Promise<{ quote_requests: SellerQuoteRequest[]; total: number }> {
    const seller = requireSeller(caller, 'read its quote requests');
    const { quoteRequests, total } = await this.quotes.listQuoteRequests({
      actor: { kind: 'seller', id: String(seller.accountId) },
      sellerAccountId: seller.accountId,
      status,
      limit: limit ?? 0,
    });
    return { quote_requests: quoteRequests.map(sellerViewOf), total };
  }

  /** Only the owning seller may answer; another seller's id is 404 like an unknown one. */
  async respond(
    caller: Principal | undefined,
    input: {
      readonly quoteRequestId: number;
      readonly action: QuoteAction;
      readonly counterPriceCents?: number;
      readonly message?: string;
    },
    correlationId: string,
  ): Promise<SellerQuoteRequest> {
    const seller = requireSeller(caller, 'answer quote requests');
    const quote = await this.quotes.respondToQuote({
      actor: { kind: 'seller', id: String(seller.accountId) },
      sellerAccountId: seller.accountId,
      quoteRequestId: input.quoteRequestId,
      action: input.action,
      counterPriceCents: input.counterPriceCents,
      message: input.message ?? '',
      correlationId,
    });
    return sellerViewOf(quote);
  }
}
