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

/** docs/specification.md, "Order lifecycle". */
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

/** Who cancelled an order: its buyer before shipment, or its seller who cannot fulfil it. */
export const CANCELLED_BY = ['buyer', 'seller'] as const;
export type CancelledBy = (typeof CANCELLED_BY)[number];

export interface Cancellation {
  readonly by: CancelledBy;
  readonly reason?: string | undefined;
  readonly cancelledAt: number;
}

/** The operator's outcomes of a dispute. */
export const DISPUTE_RESOLUTIONS = ['refunded', 'partially_refunded', 'replaced', 'rejected'] as const;
export type DisputeResolution = (typeof DISPUTE_RESOLUTIONS)[number];

export interface Resolution {
  readonly resolution: DisputeResolution;
  /** Cents refunded: the total when refunded, 1..total when partially refunded, 0 otherwise. */
  readonly refundCents: number;
  readonly note: string;
  readonly resolvedAt: number;
}

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
  /** Goods and freight. */
  readonly totalCents: number;
  /** Freight within the total; absent (0) on orders placed before freight. */
  readonly freightCents?: number | undefined;
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
  readonly cancellation?: Cancellation | undefined;
  readonly resolution?: Resolution | undefined;
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

export type OrderCancelled = DomainEvent<'OrderCancelled', { readonly cancellation: Cancellation }>;
export type DisputeResolved = DomainEvent<'DisputeResolved', { readonly resolution: Resolution }>;

export type OrderEvent =
  | OrderPlacedEvent
  | OrderShipped
  | OrderDelivered
  | OrderCompleted
  | IssueReported
  | OrderCancelled
  | DisputeResolved;
