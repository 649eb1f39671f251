import { toIso } from '@marketplace/platform';
import { orderV1, quoteV1 } from '@marketplace/proto';
import type { SellerEvent } from '../application/ports.js';

const orderIdOf = (streamId: string): number => {
  const id = Number(streamId.replace(/^order_/, ''));
  if (!Number.isSafeInteger(id) || id < 1) throw new Error(`order event on stream ${streamId}`);
  return id;
};

export const ORDER_TOPIC = 'marketplace.order.v1';
export const QUOTE_TOPIC = 'marketplace.quote.v1';

/** `marketplace.order.v1` → order.placed or order.disputed; other events (checkout, shipping, ...) are none. */
export const decodeSellerOrderEvent = (bytes: Uint8Array): SellerEvent | undefined => {
  const event = orderV1.OrderEvent.decode(bytes);
  const payload = event.payload;
  if (payload?.$case === 'orderPlaced') {
    const order = payload.value.order;
    if (!order) throw new Error(`order event ${event.eventId} without its order`);
    return {
      type: 'order.placed',
      subject: `order.placed:${order.orderId}`,
      sellerAccountId: order.sellerAccountId,
      orderId: order.orderId,
      occurredAt: event.occurredAtMs,
      data: {
        order_id: order.orderId,
        product_id: order.productId,
        product_name: order.productName,
        quantity: order.quantity,
        unit_price: order.unitPriceCents,
        total: order.totalCents,
        currency: order.currency,
        shipping_country: order.shippingCountry === '' ? null : order.shippingCountry,
        placed_at: toIso(order.placedAtMs),
        ship_by: toIso(order.shipByMs),
      },
    };
  }
  if (payload?.$case === 'issueReported') {
    const orderId = orderIdOf(event.streamId);
    const issue = payload.value.issue;
    return {
      type: 'order.disputed',
      subject: `order.disputed:${orderId}`,
      orderId,
      occurredAt: event.occurredAtMs,
      data: {
        order_id: orderId,
        reason: issue?.reason ?? '',
        requested_action: issue?.requestedAction || null,
        description: issue?.description ?? '',
        reported_at: toIso(issue?.reportedAtMs ?? event.occurredAtMs),
      },
    };
  }
  return undefined;
};

/** `marketplace.quote.v1` → quote.requested; other quote events are none. */
export const decodeSellerQuoteEvent = (bytes: Uint8Array): SellerEvent | undefined => {
  const event = quoteV1.QuoteEvent.decode(bytes);
  if (event.payload?.$case !== 'requested') return undefined;
  const quote = event.payload.value.quoteRequest;
  if (!quote) throw new Error(`quote event ${event.eventId} without its request`);
  return {
    type: 'quote.requested',
    subject: `quote.requested:${quote.quoteRequestId}`,
    sellerAccountId: quote.sellerAccountId,
    occurredAt: event.occurredAtMs,
    data: {
      quote_request_id: quote.quoteRequestId,
      product_id: quote.productId,
      product_name: quote.productName,
      quantity: quote.quantity,
      target_price: quote.targetPriceCents ?? null,
      message: quote.message === '' ? null : quote.message,
      created_at: toIso(event.occurredAtMs),
    },
  };
};
