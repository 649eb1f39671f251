import type { DomainEvent } from '@marketplace/eventsourcing';
import type { BuyerContact } from './order.events.js';

/** One line of a session, priced when the session was created. */
export interface CheckoutLine {
  readonly productId: string;
  readonly productName: string;
  readonly sellerAccountId: number;
  readonly quantity: number;
  readonly unitPriceCents: number;
  /** Goods only: unit price times quantity. */
  readonly lineTotalCents: number;
  /** Freight of this line, apart from the goods; absent (0) in sessions priced before freight. */
  readonly freightCents?: number | undefined;
  /** Set when the line is an accepted or countered quote, at its agreed price. */
  readonly quoteRequestId?: number | undefined;
}

export type CheckoutStatus =
  'ready_for_complete' | 'requires_escalation' | 'completing' | 'completed' | 'canceled';

export interface CheckoutSession {
  /** `checkout_<uuid>`: the stream id. */
  readonly checkoutId: string;
  readonly status: CheckoutStatus;
  readonly lines: readonly CheckoutLine[];
  /** Goods only. */
  readonly subtotalCents: number;
  /** Freight of every line; absent (0) in sessions priced before freight. The total is goods plus freight. */
  readonly freightCents?: number | undefined;
  readonly currency: string;
  /** Why the session needs escalation, or why the last completion attempt failed. */
  readonly messages: readonly string[];
  readonly buyer?: BuyerContact | undefined;
  /** The verified buyer who created the session, when one did; only that buyer may complete it. */
  readonly buyerAccountId?: number | undefined;
  readonly shippingCountry?: string | undefined;
  readonly createdAt: number;
  readonly expiresAt: number;
  /**
   * Completion attempts started so far; the stock reservations of attempt n of line i are
   * `<checkoutId>:<n>:<i>`, so re-running an attempt never reserves twice and a new attempt never reuses a
   * released reservation.
   */
  readonly attempt: number;
  readonly orderIds: readonly number[];
}

export type CheckoutCreated = DomainEvent<'CheckoutCreated', { readonly session: CheckoutSession }>;
export type CheckoutCompletionStarted = DomainEvent<
  'CheckoutCompletionStarted',
  { readonly attempt: number; readonly buyerAccountId: number }
>;
export type CheckoutCompletionFailed = DomainEvent<
  'CheckoutCompletionFailed',
  { readonly attempt: number; readonly reason: string }
>;
export type CheckoutCompleted = DomainEvent<'CheckoutCompleted', { readonly orderIds: readonly number[] }>;

/** The buyer changed an open session, which was priced again: the whole session as priced. */
export type CheckoutUpdated = DomainEvent<'CheckoutUpdated', { readonly session: CheckoutSession }>;
/** The buyer canceled an open session (nothing was reserved: stock is reserved only while completing). */
export type CheckoutCanceled = DomainEvent<'CheckoutCanceled', Record<string, never>>;

export type CheckoutEvent =
  | CheckoutCreated
  | CheckoutCompletionStarted
  | CheckoutCompletionFailed
  | CheckoutCompleted
  | CheckoutUpdated
  | CheckoutCanceled;

export const reservationIdOf = (checkoutId: string, attempt: number, lineIndex: number): string =>
  `${checkoutId}:${attempt}:${lineIndex}`;

/** A session's stream id, `checkout_<uuid>`; anything else would read another stream type (an order's). */
export const isCheckoutId = (id: string): boolean =>
  /^checkout_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id);
