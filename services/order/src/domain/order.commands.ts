import type { Command } from '@marketplace/eventsourcing';
import type {
  CancelledBy,
  DisputeReason,
  DisputeResolution,
  PlacedOrder,
  RequestedAction,
  Tracking,
} from './order.events.js';

export type PlaceOrder = Command<'PlaceOrder', { readonly order: PlacedOrder }>;
/** Only the order's seller may move it; the application checks the caller's account against the order. */
export type MarkShipped = Command<'MarkShipped', { readonly tracking: Tracking }>;
export type MarkDelivered = Command<'MarkDelivered', Record<string, never>>;
export type ConfirmOrder = Command<'ConfirmOrder', Record<string, never>>;
/** The scheduled job's command: complete a delivered order whose inspection deadline passed. */
export type CompleteAfterInspection = Command<'CompleteAfterInspection', Record<string, never>>;
export type OpenDispute = Command<
  'OpenDispute',
  {
    readonly reason: DisputeReason;
    readonly description: string;
    readonly requestedAction?: RequestedAction | undefined;
    readonly photoUrls: readonly string[];
  }
>;

/** The buyer before shipment, or the seller who cannot fulfil; the application checks who owns the order. */
export type CancelOrder = Command<
  'CancelOrder',
  { readonly by: CancelledBy; readonly reason?: string | undefined }
>;
/** The operator's decision on a disputed order; `refundCents` only for partially_refunded. */
export type ResolveDispute = Command<
  'ResolveDispute',
  {
    readonly resolution: DisputeResolution;
    readonly refundCents?: number | undefined;
    readonly note: string;
  }
>;

export type OrderCommand =
  | PlaceOrder
  | MarkShipped
  | MarkDelivered
  | ConfirmOrder
  | CompleteAfterInspection
  | OpenDispute
  | CancelOrder
  | ResolveDispute;
