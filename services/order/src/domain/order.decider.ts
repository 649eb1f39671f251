import type { Decider } from '@marketplace/eventsourcing';
import type { FieldViolation } from '@marketplace/platform';
import { conflict, validationError } from '@marketplace/platform';
import type {
  CancelOrder,
  MarkShipped,
  OpenDispute,
  OrderCommand,
  ResolveDispute,
} from './order.commands.js';
import type { Order, OrderEvent, Resolution, Tracking } from './order.events.js';
import { DISPUTE_REASONS, DISPUTE_RESOLUTIONS, REQUESTED_ACTIONS } from './order.events.js';
import { characterCount, ORDER_DEADLINES, ORDER_LIMITS } from './order.rules.js';

export type OrderState = { readonly status: 'absent' } | { readonly status: 'placed'; readonly order: Order };

const existing = (state: OrderState): Order => {
  // Commands other than PlaceOrder reach the decider only for orders the application found.
  if (state.status === 'absent') throw conflict('the order does not exist');
  return state.order;
};

const tooLong = (value: string | undefined, max: number, path: string): FieldViolation[] =>
  value !== undefined && characterCount(value) > max
    ? [{ path, message: `must be at most ${max} characters` }]
    : [];

const sameTracking = (a: Tracking | undefined, b: Tracking): boolean =>
  (a?.trackingNumber ?? '') === (b.trackingNumber ?? '') &&
  (a?.trackingUrl ?? '') === (b.trackingUrl ?? '') &&
  (a?.carrierName ?? '') === (b.carrierName ?? '');

/** docs/specification.md, "Limits": tracking number and carrier at most 255 characters, URL at most 2000. */
export const validateTracking = (tracking: Tracking): void => {
  const violations = [
    ...tooLong(tracking.trackingNumber, ORDER_LIMITS.trackingNumberMaxLength, 'tracking_number'),
    ...tooLong(tracking.trackingUrl, ORDER_LIMITS.trackingUrlMaxLength, 'tracking_url'),
    ...tooLong(tracking.carrierName, ORDER_LIMITS.carrierNameMaxLength, 'carrier_name'),
  ];
  if (violations.length > 0) throw validationError('invalid tracking details', violations);
};

const markShipped = (command: MarkShipped, order: Order): OrderEvent[] => {
  const { tracking } = command.data;
  validateTracking(tracking);
  if (order.status === 'awaiting_shipment') {
    return [{ type: 'OrderShipped', data: { tracking, shippedAt: command.metadata.now } }];
  }
  // Repeating the same call changes nothing and is not an error: bulk_mark_shipped is idempotent.
  if (order.status === 'shipped' && sameTracking(order.tracking, tracking)) return [];
  throw conflict(`order ${order.orderId} is ${order.status}: it can no longer be marked shipped`);
};

const openDispute = (command: OpenDispute, order: Order): OrderEvent[] => {
  const { reason, description, requestedAction, photoUrls } = command.data;
  const violations: FieldViolation[] = [
    ...(DISPUTE_REASONS.includes(reason)
      ? []
      : [{ path: 'reason', message: `must be one of ${DISPUTE_REASONS.join(', ')}` }]),
    ...(description.trim() === '' ? [{ path: 'description', message: 'must not be empty' }] : []),
    ...tooLong(description, ORDER_LIMITS.disputeDescriptionMaxLength, 'description'),
    ...(requestedAction === undefined || REQUESTED_ACTIONS.includes(requestedAction)
      ? []
      : [{ path: 'requested_action', message: `must be one of ${REQUESTED_ACTIONS.join(', ')}` }]),
    ...(photoUrls.length > ORDER_LIMITS.disputePhotoUrlsMax
      ? [{ path: 'photo_urls', message: `must have at most ${ORDER_LIMITS.disputePhotoUrlsMax} items` }]
      : []),
  ];
  if (violations.length > 0) throw validationError('invalid dispute', violations);
  const { now } = command.metadata;
  if (order.status !== 'delivered') {
    throw conflict(
      `order ${order.orderId} is ${order.status}: only a delivered order pending confirmation can be disputed`,
    );
  }
  if (order.inspectionDeadline !== undefined && now > order.inspectionDeadline) {
    throw conflict(`the inspection window of order ${order.orderId} has closed`);
  }
  return [
    {
      type: 'IssueReported',
      data: { issue: { reason, description, requestedAction, photoUrls: [...photoUrls], reportedAt: now } },
    },
  ];
};

/** docs/specification.md, "Order lifecycle": only an order awaiting shipment can be cancelled; a repeat is a no-op. */
const cancelOrder = (command: CancelOrder, order: Order): OrderEvent[] => {
  const { by, reason } = command.data;
  const violations = tooLong(reason, ORDER_LIMITS.cancelReasonMaxLength, 'reason');
  if (violations.length > 0) throw validationError('invalid cancellation', violations);
  if (order.status === 'cancelled') return [];
  if (order.status !== 'awaiting_shipment') {
    throw conflict(
      `order ${order.orderId} is ${order.status}: only an order awaiting shipment can be cancelled`,
    );
  }
  const trimmed = reason?.trim();
  return [
    {
      type: 'OrderCancelled',
      data: {
        cancellation: {
          by,
          reason: trimmed === '' ? undefined : trimmed,
          cancelledAt: command.metadata.now,
        },
      },
    },
  ];
};

const sameResolution = (a: Resolution, b: Omit<Resolution, 'resolvedAt'>): boolean =>
  a.resolution === b.resolution && a.refundCents === b.refundCents && a.note === b.note;

/** docs/specification.md, "Disputes": the operator resolves a disputed order once; the same decision again is a no-op. */
const resolveDispute = (command: ResolveDispute, order: Order): OrderEvent[] => {
  const { resolution, refundCents, note } = command.data;
  const partial = resolution === 'partially_refunded';
  const violations: FieldViolation[] = [
    ...(DISPUTE_RESOLUTIONS.includes(resolution)
      ? []
      : [{ path: 'resolution', message: `must be one of ${DISPUTE_RESOLUTIONS.join(', ')}` }]),
    ...(note.trim() === '' ? [{ path: 'note', message: 'must not be empty' }] : []),
    ...tooLong(note, ORDER_LIMITS.resolutionNoteMaxLength, 'note'),
    ...(partial &&
    (refundCents === undefined ||
      !Number.isSafeInteger(refundCents) ||
      refundCents < 1 ||
      refundCents > order.totalCents)
      ? [
          {
            path: 'refund_amount',
            message: `must be a whole number of cents from 1 to the order total ${order.totalCents}`,
          },
        ]
      : []),
    ...(!partial && refundCents !== undefined
      ? [{ path: 'refund_amount', message: 'is only given with partially_refunded' }]
      : []),
  ];
  if (violations.length > 0) throw validationError('invalid resolution', violations);
  const decided = {
    resolution,
    refundCents: resolution === 'refunded' ? order.totalCents : partial ? (refundCents ?? 0) : 0,
    note: note.trim(),
  };
  if (order.status === 'resolved' && order.resolution && sameResolution(order.resolution, decided)) return [];
  if (order.status !== 'issue_reported') {
    throw conflict(`order ${order.orderId} is ${order.status}: only a disputed order can be resolved`);
  }
  return [
    { type: 'DisputeResolved', data: { resolution: { ...decided, resolvedAt: command.metadata.now } } },
  ];
};

const decide = (command: OrderCommand, state: OrderState): readonly OrderEvent[] => {
  const { now } = command.metadata;
  switch (command.type) {
    case 'PlaceOrder':
      if (state.status !== 'absent') throw conflict(`order ${command.data.order.orderId} already exists`);
      return [{ type: 'OrderPlaced', data: { order: command.data.order } }];
    case 'MarkShipped':
      return markShipped(command, existing(state));
    case 'MarkDelivered': {
      const order = existing(state);
      if (order.status === 'shipped') {
        return [
          {
            type: 'OrderDelivered',
            data: { deliveredAt: now, inspectionDeadline: now + ORDER_DEADLINES.inspectWithinMs },
          },
        ];
      }
      if (order.deliveredAt !== undefined) return [];
      throw conflict(
        `order ${order.orderId} is ${order.status}: only a shipped order can be marked delivered`,
      );
    }
    case 'ConfirmOrder': {
      const order = existing(state);
      if (order.status === 'delivered') {
        return [{ type: 'OrderCompleted', data: { completedAt: now, completion: 'buyer_confirmed' } }];
      }
      if (order.status === 'completed') return [];
      throw conflict(`order ${order.orderId} is ${order.status}: only a delivered order can be confirmed`);
    }
    case 'CompleteAfterInspection': {
      const order = existing(state);
      // Anything else (already completed, disputed, not yet due) is left alone: the job may run on any replica.
      if (
        order.status !== 'delivered' ||
        order.inspectionDeadline === undefined ||
        now < order.inspectionDeadline
      )
        return [];
      return [{ type: 'OrderCompleted', data: { completedAt: now, completion: 'inspection_window_passed' } }];
    }
    case 'OpenDispute':
      return openDispute(command, existing(state));
    case 'CancelOrder':
      return cancelOrder(command, existing(state));
    case 'ResolveDispute':
      return resolveDispute(command, existing(state));
  }
};

const evolveOrder = (order: Order, event: OrderEvent): Order => {
  switch (event.type) {
    case 'OrderPlaced':
      return order;
    case 'OrderShipped':
      return { ...order, status: 'shipped', tracking: event.data.tracking, shippedAt: event.data.shippedAt };
    case 'OrderDelivered':
      return { ...order, status: 'delivered', ...event.data };
    case 'OrderCompleted':
      return { ...order, status: 'completed', completedAt: event.data.completedAt };
    case 'IssueReported':
      return { ...order, status: 'issue_reported', issue: event.data.issue };
    case 'OrderCancelled':
      return { ...order, status: 'cancelled', cancellation: event.data.cancellation };
    case 'DisputeResolved':
      return { ...order, status: 'resolved', resolution: event.data.resolution };
  }
};

export const orderDecider: Decider<OrderCommand, OrderEvent, OrderState> = {
  decide,
  evolve: (state, event) => {
    if (event.type === 'OrderPlaced') {
      return { status: 'placed', order: { ...event.data.order, status: 'awaiting_shipment' } };
    }
    if (state.status === 'absent') throw new Error(`${event.type} before OrderPlaced`);
    return { status: 'placed', order: evolveOrder(state.order, event) };
  },
  initialState: () => ({ status: 'absent' }),
};

/** Ship-by deadline of an order placed at `placedAt`. */
export const shipByOf = (placedAt: number): number => placedAt + ORDER_DEADLINES.shipWithinMs;
