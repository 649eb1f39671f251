import type { Queryable, Transaction } from '@marketplace/database';
import type { FreightTerms, ListingForCheckout } from '../domain/checkout.rules.js';
import type { DisputeNotice } from '../domain/order.emails.js';
import type { Order } from '../domain/order.events.js';

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
  /**
   * The freight terms the quote recorded when asked: null when the seller had set none; absent on quotes
   * recorded before they carried terms.
   */
  readonly freight?: FreightTerms | null | undefined;
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

export interface VersionedOrder {
  readonly order: Order;
  /** The order stream's version after its last event. */
  readonly version: number;
}

export interface OrderRecords {
  /** Order ids come from a sequence, never from counting rows: concurrent checkouts never collide. */
  allocateOrderId(tx: Transaction): Promise<number>;
  save(tx: Transaction, versionedOrder: VersionedOrder): Promise<void>;
  get(db: Queryable, orderId: number): Promise<VersionedOrder | undefined>;
  /** The seller's orders among `orderIds`; the others (unknown or someone else's) are simply absent. */
  ofSeller(db: Queryable, sellerAccountId: number, orderIds: readonly number[]): Promise<VersionedOrder[]>;
  /** Orders awaiting shipment whose ship-by deadline is before `deadlineBefore`, soonest first. */
  atRisk(
    db: Queryable,
    sellerAccountId: number,
    deadlineBefore: number,
    limit: number,
  ): Promise<{
    orders: Order[];
    total: number;
  }>;
  /** The seller's disputed orders, latest report first. */
  issuesReported(
    db: Queryable,
    sellerAccountId: number,
    limit: number,
  ): Promise<{
    orders: Order[];
    total: number;
  }>;
  /** Delivered orders whose inspection deadline passed by `now`, oldest deadline first. */
  dueForCompletion(db: Queryable, now: number, limit: number): Promise<number[]>;
  /**
   * A page of orders matching `filter`, newest (highest id) first, after the cursor (the last id of the
   * previous page). One more row than asked tells whether a next page exists.
   */
  list(
    db: Queryable,
    filter: {
      readonly buyerAccountId?: number | undefined;
      readonly sellerAccountId?: number | undefined;
      readonly statuses?: readonly string[] | undefined;
      readonly disputed?: boolean | undefined;
    },
    page: {
      readonly limit: number;
      readonly beforeOrderId?: number | undefined;
    },
  ): Promise<{
    orders: Order[];
    nextBeforeOrderId: number | undefined;
  }>;
  /** The seller's orders awaiting shipment placed since `sinceMs`, newest first. */
  placedSince(
    db: Queryable,
    sellerAccountId: number,
    sinceMs: number,
    limit: number,
  ): Promise<{
    orders: Order[];
    total: number;
  }>;
  countPlacedSince(db: Queryable, sinceMs: number): Promise<number>;
}

export interface CheckoutCompletions {
  started(tx: Transaction, checkoutId: string, attempt: number, now: number): Promise<void>;
  ended(tx: Transaction, checkoutId: string): Promise<void>;
  startedBefore(db: Queryable, before: number, limit: number): Promise<string[]>;
}

export interface DisputeNotices {
  record(tx: Transaction, notice: DisputeNotice, now: number): Promise<void>;
  /**
   * Up to `limit` notices whose email is not queued yet, oldest first, locked until `tx` ends (another
   * transaction queueing them skips them).
   */
  unqueued(tx: Transaction, limit: number): Promise<DisputeNotice[]>;
  markQueued(tx: Transaction, orderIds: readonly number[], now: number): Promise<void>;
}

export interface StockRelease {
  readonly orderId: number;
  readonly productId: string;
  readonly reservationId: string;
  /** Attempts including the one just claimed. */
  readonly attempts: number;
}

export interface StockReleases {
  /** Due at once; a second record for the order (a replayed cancellation) changes nothing. */
  record(
    tx: Transaction,
    release: {
      orderId: number;
      productId: string;
      reservationId: string;
    },
    now: number,
  ): Promise<void>;
  /** Claims due releases (replicas never claim the same row) for one attempt, pushing them a lease ahead. */
  claimDue(db: Queryable, now: number, limit: number, leaseMs: number): Promise<StockRelease[]>;
  markReleased(db: Queryable, orderId: number, now: number): Promise<void>;
  retryLater(db: Queryable, orderId: number, error: string, retryAt: number): Promise<void>;
  find(
    db: Queryable,
    orderId: number,
  ): Promise<
    | {
        releasedAt?: number;
        attempts: number;
      }
    | undefined
  >;
}
