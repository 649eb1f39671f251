import type { EventEncoder, RecordedEvent } from '@marketplace/eventsourcing';
import { orderV1 } from '@marketplace/proto';
import type { CheckoutEvent } from '../domain/checkout.events.js';
import type { Order, OrderEvent } from '../domain/order.events.js';
import {
  toCancellationMessage,
  toIssueMessage,
  toOrderMessage,
  toResolutionMessage,
  toSessionMessage,
  toTrackingMessage,
} from './order-proto.mapper.js';

/** Order and checkout events travel on `marketplace.order.v1` as protobuf `marketplace.order.v1.OrderEvent`. */
export const ORDER_EVENT_CONTENT_TYPE = 'application/protobuf';
export const ORDER_TOPIC = 'marketplace.order.v1';

type StoredEvent = OrderEvent | CheckoutEvent;

// A record rather than a list, so the compiler checks it names every event of the schema.
const EVENT_TYPES: Record<StoredEvent['type'], true> = {
  CheckoutCreated: true,
  CheckoutCompletionStarted: true,
  CheckoutCompletionFailed: true,
  CheckoutCompleted: true,
  CheckoutUpdated: true,
  CheckoutCanceled: true,
  OrderPlaced: true,
  OrderShipped: true,
  OrderDelivered: true,
  OrderCompleted: true,
  IssueReported: true,
  OrderCancelled: true,
  DisputeResolved: true,
};

const isStoredEvent = (event: RecordedEvent): event is RecordedEvent<StoredEvent> =>
  Object.hasOwn(EVENT_TYPES, event.type);

const payloadOf = (event: StoredEvent, version: number): orderV1.OrderEvent['payload'] => {
  switch (event.type) {
    case 'CheckoutCreated':
      return { $case: 'checkoutCreated', value: { session: toSessionMessage(event.data.session, version) } };
    case 'CheckoutCompletionStarted':
      return { $case: 'checkoutCompletionStarted', value: event.data };
    case 'CheckoutCompletionFailed':
      return { $case: 'checkoutCompletionFailed', value: event.data };
    case 'CheckoutCompleted':
      return { $case: 'checkoutCompleted', value: { orderIds: [...event.data.orderIds] } };
    case 'CheckoutUpdated':
      return { $case: 'checkoutUpdated', value: { session: toSessionMessage(event.data.session, version) } };
    case 'CheckoutCanceled':
      return { $case: 'checkoutCanceled', value: {} };
    case 'OrderPlaced':
      return {
        $case: 'orderPlaced',
        value: {
          order: toOrderMessage(
            { ...event.data.order, status: 'awaiting_shipment' } satisfies Order,
            version,
          ),
        },
      };
    case 'OrderShipped':
      return {
        $case: 'orderShipped',
        value: { tracking: toTrackingMessage(event.data.tracking), shippedAtMs: event.data.shippedAt },
      };
    case 'OrderDelivered':
      return {
        $case: 'orderDelivered',
        value: { deliveredAtMs: event.data.deliveredAt, inspectionDeadlineMs: event.data.inspectionDeadline },
      };
    case 'OrderCompleted':
      return {
        $case: 'orderCompleted',
        value: { completedAtMs: event.data.completedAt, completion: event.data.completion },
      };
    case 'IssueReported':
      return { $case: 'issueReported', value: { issue: toIssueMessage(event.data.issue) } };
    case 'OrderCancelled':
      return {
        $case: 'orderCancelled',
        value: { cancellation: toCancellationMessage(event.data.cancellation) },
      };
    case 'DisputeResolved':
      return {
        $case: 'disputeResolved',
        value: { resolution: toResolutionMessage(event.data.resolution) },
      };
  }
};

/** The outbox relay's encoder for the order store (orders and checkout sessions alike). */
export const encodeOrderEvent: EventEncoder = (event) => {
  if (!isStoredEvent(event)) {
    throw new Error(`${event.streamId} holds an event that is not an order or checkout event: ${event.type}`);
  }
  const message = orderV1.OrderEvent.encode({
    eventId: event.eventId,
    streamId: event.streamId,
    version: event.version,
    occurredAtMs: event.occurredAt,
    actor: event.metadata.actor,
    correlationId: event.metadata.correlationId ?? '',
    payload: payloadOf({ type: event.type, data: event.data } as StoredEvent, event.version),
  });
  return { value: message.finish(), contentType: ORDER_EVENT_CONTENT_TYPE };
};
