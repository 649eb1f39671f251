import type { DomainEvent } from '@marketplace/eventsourcing';
import type { QuoteAction, QuoteParty, QuoteStatus } from '@marketplace/vocabulary';

export interface QuoteBuyer {
  readonly email: string;
  readonly name?: string;
  readonly company?: string;
}

/**
 * A lot's freight terms as the listing carried them (docs/specification.md, "Checkout and orders": freight):
 * `cents` for flat_per_order and per_unit, `shipFromRegion` for buyer_pickup.
 */
export interface FreightTermsSnapshot {
  readonly mode: string;
  readonly cents?: number | undefined;
  readonly shipFromRegion?: string | undefined;
}

/** What the listing looked like when the buyer asked: the seller reads the request against it. */
export interface ProductSnapshot {
  readonly productId: string;
  readonly sellerAccountId: number;
  readonly name: string;
  readonly unitPriceCents: number;
  readonly currency: string;
  readonly availableQuantity: number;
  /**
   * The freight terms the buyer saw when asking (docs/specification.md, "Quotes"): null when the seller had set
   * none (no freight), absent on requests recorded before snapshots carried them.
   */
  readonly shipping?: FreightTermsSnapshot | null | undefined;
}

export interface QuoteResponse {
  readonly action: QuoteAction;
  /** Set for `counter` only. */
  readonly counterPriceCents?: number;
  readonly message?: string;
  readonly respondedAt: number;
  readonly respondedByAccountId: number;
}

/** One step of the negotiation after the request: an answer or a counter-offer of either side. */
export interface QuoteStep {
  readonly party: QuoteParty;
  readonly action: QuoteAction;
  /** counter: the price offered; accept: the price agreed. Cents per unit. */
  readonly priceCents?: number;
  readonly message?: string;
  readonly at: number;
  /** counter only: until when the other side may accept it (and the buyer buy it). */
  readonly expiresAt?: number;
  readonly byAccountId?: number;
}

/** The whole state of a quote request. Money is integer cents, times are epoch milliseconds. */
export interface QuoteRequest {
  readonly quoteRequestId: number;
  readonly product: ProductSnapshot;
  readonly quantity: number;
  readonly buyer: QuoteBuyer;
  /**
   * The account that owns the request: the verified caller that asked (API key or agent token), or the account
   * that claimed an anonymous request with its claim token. Absent for an unclaimed anonymous request.
   */
  readonly buyerAccountId?: number;
  /** When a buyer account claimed this anonymous request: its buyer details were typed, not verified. */
  readonly claimedAt?: number;
  readonly targetPriceCents?: number;
  readonly message?: string;
  /** Where the buyer wants the lot shipped: the seller prices freight for it (docs/specification.md, "Quotes"). */
  readonly shippingDestination?: string;
  readonly status: QuoteStatus;
  readonly response?: QuoteResponse;
  /**
   * The unit price a checkout of this quote uses: the counter price, or on accept the buyer's target price (the
   * listed price when none was given). Absent while pending and after a decline.
   */
  readonly agreedUnitPriceCents?: number;
  /**
   * Until when the open offer stands (a counter of either side) or the agreed price can be bought: a week after
   * the step that made it (docs/specification.md).
   */
  readonly offerExpiresAt?: number;
  /**
   * Every step after the request, oldest first (docs/specification.md, "Quotes"): both sides see it. Absent on
   * requests recorded before negotiation rounds existed.
   */
  readonly history?: readonly QuoteStep[];
  /** Quotes may ask for more than the stock on purpose (docs/specification.md, "Service"); the seller sees that it does. */
  readonly exceedsAvailableStock: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A buyer asked a seller for a quote. State-carrying: consumers need no other event to know the request. */
export type QuoteRequested = DomainEvent<'QuoteRequested', { readonly quoteRequest: QuoteRequest }>;

/** The seller accepted, countered or declined. State-carrying: the whole request after the response. */
export type QuoteResponded = DomainEvent<'QuoteResponded', { readonly quoteRequest: QuoteRequest }>;

/** A buyer account claimed an anonymous request with its claim token. State-carrying: the whole request. */
export type QuoteClaimed = DomainEvent<'QuoteClaimed', { readonly quoteRequest: QuoteRequest }>;

/** The buyer accepted, countered or declined a seller's counter-offer. State-carrying: the whole request. */
export type QuoteBuyerResponded = DomainEvent<'QuoteBuyerResponded', { readonly quoteRequest: QuoteRequest }>;

export type QuoteEvent = QuoteRequested | QuoteResponded | QuoteClaimed | QuoteBuyerResponded;
