import type { DomainEvent } from '@marketplace/eventsourcing';

/** Money is integer cents, times are epoch milliseconds. */
export interface BuyerContact {
  readonly email: string;
  readonly name?: string | undefined;
  readonly company?: string | undefined;
}

export interface Tracking {
  readonly trackingNumber?: string | undefined;
  readonly trackingUrl?: string | undefined;
  readonly carrierName?: string | undefined;
}

export const DISPUTE_REASONS = ['missing_units', 'quality_issue', 'damaged', 'wrong_item', 'other'] as const;
export type DisputeReason = (typeof DISPUTE_REASONS)[number];
export const REQUESTED_ACTIONS = ['refund', 'replacement', 'partial_refund'] as const;
export type RequestedAction = (typeof REQUESTED_ACTIONS)[number];

export interface Issue {
  readonly reason: DisputeReason;
  readonly description: string;
  readonly requestedAction?: RequestedAction | undefined;
  readonly photoUrls: readonly string[];
  readonly reportedAt: number;
}

/** docs/specification.md, "Checkout and orders"; `resolved` and `cancelled` have no command yet (see the README). */
export const ORDER_STATUSES = [
  'awaiting_shipment',
  'shipped',
  'delivered',
  'issue_reported',
  'resolved',
  'completed',
  'cancelled',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** An order as placed: one line of a checkout, one product of one seller. */
export interface PlacedOrder {
  readonly orderId: number;
  readonly checkoutId: string;
  readonly reservationId: string;
  readonly productId: string;
  readonly productName: string;
  readonly sellerAccountId: number;
  readonly buyerAccountId: number;
  readonly buyer: BuyerContact;
  readonly quantity: number;
  readonly unitPriceCents: number;
  readonly totalCents: number;
  readonly currency: string;
  readonly quoteRequestId?: number | undefined;
  readonly shippingCountry?: string | undefined;
  readonly paymentTerms: 'net_30';
  readonly placedAt: number;
  readonly shipBy: number;
}

/** The whole state of an order. */
export interface Order extends PlacedOrder {
  readonly status: OrderStatus;
  readonly tracking?: Tracking | undefined;
  readonly shippedAt?: number | undefined;
  readonly deliveredAt?: number | undefined;
  readonly inspectionDeadline?: number | undefined;
  readonly completedAt?: number | undefined;
  readonly issue?: Issue | undefined;
}

export type OrderCompletion = 'buyer_confirmed' | 'inspection_window_passed';

export type OrderPlacedEvent = DomainEvent<'OrderPlaced', { readonly order: PlacedOrder }>;
export type OrderShipped = DomainEvent<
  'OrderShipped',
  { readonly tracking: Tracking; readonly shippedAt: number }
>;
export type OrderDelivered = DomainEvent<
  'OrderDelivered',
  { readonly deliveredAt: number; readonly inspectionDeadline: number }
>;
export type OrderCompleted = DomainEvent<
  'OrderCompleted',
  { readonly completedAt: number; readonly completion: OrderCompletion }
>;
export type IssueReported = DomainEvent<'IssueReported', { readonly issue: Issue }>;

export type OrderEvent = OrderPlacedEvent | OrderShipped | OrderDelivered | OrderCompleted | IssueReported;
