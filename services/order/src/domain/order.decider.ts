import type { Decider } from '@marketplace/eventsourcing';
import type { FieldViolation } from '@marketplace/platform';
import { conflict, validationError } from '@marketplace/platform';
import type { MarkShipped, OpenDispute, OrderCommand } from './order.commands.js';
import type { Order, OrderEvent, Tracking } from './order.events.js';
import { DISPUTE_REASONS, REQUESTED_ACTIONS } from './order.events.js';
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
