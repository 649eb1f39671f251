import type { Queryable, Transaction } from '@marketplace/database';
import type { ListingForCheckout } from '../domain/checkout.rules.js';

/** The listing service as checkout sees it: the source of truth for price, seller and stock. */
export interface Listings {
  /** Undefined when there is no such listing, or it is not publicly promoted (in-app only listings are not sold). */
  get(productId: string): Promise<ListingForCheckout | undefined>;
  /**
   * Takes the units out of stock; idempotent per reservation id. Throws AppError('conflict') when the stock is
   * insufficient.
   */
  reserve(productId: string, quantity: number, reservationId: string): Promise<void>;
  /** Puts a reservation's units back; releasing an unknown or released reservation changes nothing. */
  release(productId: string, reservationId: string): Promise<void>;
}

/** A quote request as checkout needs it. */
export interface QuoteForCheckout {
  readonly quoteRequestId: number;
  readonly productId: string;
  readonly quantity: number;
  /** Set once the seller accepted or countered; absent while pending and after a decline. */
  readonly agreedUnitPriceCents?: number | undefined;
  /** Until when the agreed price can be bought; absent without an agreed price. */
  readonly offerExpiresAt?: number | undefined;
  /**
   * The buyer account that owns the quote: the account that asked, or the one that claimed an anonymous request
   * with its claim token. Absent while an anonymous request is unclaimed: nobody may check it out then.
   */
  readonly buyerAccountId?: number | undefined;
}

export interface Quotes {
  get(quoteRequestId: number): Promise<QuoteForCheckout | undefined>;
}

/** Who used a quote's agreed price, and for which order once placed. */
export interface QuoteRedemption {
  readonly quoteRequestId: number;
  readonly checkoutId: string;
  /** Absent while the checkout is completing. */
  readonly orderId?: number | undefined;
}

/**
 * The single use of agreed quotes (docs/specification.md, "Quotes"): a quote is held by the checkout whose
 * completion started with it, released if that attempt fails, and redeemed by the order, each in the
 * transaction of the checkout's or the order's event.
 */
export interface QuoteRedemptions {
  /** The redemptions (held or done) of these quotes. */
  find(db: Queryable, quoteRequestIds: readonly number[]): Promise<QuoteRedemption[]>;
  /** Holds the quotes for a checkout; answers those another checkout holds or used (none: all are held). */
  hold(
    tx: Transaction,
    checkoutId: string,
    quoteRequestIds: readonly number[],
    now: number,
  ): Promise<QuoteRedemption[]>;
  /** Lets go of what a failed attempt held. */
  release(tx: Transaction, checkoutId: string): Promise<void>;
  /** Records the order that used the quote; the checkout must hold it. */
  redeem(tx: Transaction, checkoutId: string, quoteRequestId: number, orderId: number): Promise<void>;
}
