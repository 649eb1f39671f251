import { describe, expect, it } from '@jest/globals';
import { orderV1, quoteV1 } from '@marketplace/proto';
import { decodeSellerOrderEvent, decodeSellerQuoteEvent } from '../src/adapters/seller-event.decoders.js';

const AT = Date.UTC(2026, 8, 1, 12);
const envelope = {
  eventId: 'e1',
  version: 1,
  occurredAtMs: AT,
  correlationId: '',
  actor: { kind: 'buyer', id: '41' },
};

describe('seller events (docs/specification.md, "Seller notifications")', () => {
  it('turns OrderPlaced into order.placed for the order’s seller, without the buyer’s contact', () => {
    const bytes = orderV1.OrderEvent.encode({
      ...envelope,
      streamId: 'order_12',
      payload: {
        $case: 'orderPlaced',
        value: {
          order: orderV1.Order.fromPartial({
            orderId: 12,
            productId: 'product_3',
            productName: 'Lot',
            sellerAccountId: 7,
            buyer: { email: 'private@buyer.example', name: '', company: '' },
            quantity: 2,
            unitPriceCents: 500,
            totalCents: 1_000,
            currency: 'USD',
            placedAtMs: AT,
            shipByMs: AT + 72 * 3_600_000,
          }),
        },
      },
    }).finish();
    const event = decodeSellerOrderEvent(bytes);
    expect(event).toMatchObject({
      type: 'order.placed',
      subject: 'order.placed:12',
      sellerAccountId: 7,
      orderId: 12,
      data: { order_id: 12, product_id: 'product_3', quantity: 2, total: 1_000, shipping_country: null },
    });
    expect(JSON.stringify(event)).not.toContain('private@buyer.example');
  });

  it('turns IssueReported into order.disputed naming the order, and ignores other order events', () => {
    const disputed = orderV1.OrderEvent.encode({
      ...envelope,
      streamId: 'order_12',
      payload: {
        $case: 'issueReported',
        value: {
          issue: {
            reason: 'damaged',
            description: 'Chipped',
            requestedAction: '',
            photoUrls: [],
            reportedAtMs: AT,
          },
        },
      },
    }).finish();
    expect(decodeSellerOrderEvent(disputed)).toMatchObject({
      type: 'order.disputed',
      orderId: 12,
      data: { order_id: 12, reason: 'damaged', requested_action: null },
    });
    const shipped = orderV1.OrderEvent.encode({
      ...envelope,
      streamId: 'order_12',
      payload: { $case: 'orderShipped', value: { shippedAtMs: AT, tracking: undefined } },
    }).finish();
    expect(decodeSellerOrderEvent(shipped)).toBeUndefined();
  });

  it('turns QuoteRequested into quote.requested for the seller, and ignores answers', () => {
    const quoteRequest = quoteV1.QuoteRequest.fromPartial({
      quoteRequestId: 9,
      productId: 'product_3',
      productName: 'Lot',
      sellerAccountId: 7,
      quantity: 500,
      targetPriceCents: 300,
    });
    const requested = quoteV1.QuoteEvent.encode({
      ...envelope,
      streamId: 'quote_9',
      payload: { $case: 'requested', value: { quoteRequest } },
    }).finish();
    expect(decodeSellerQuoteEvent(requested)).toMatchObject({
      type: 'quote.requested',
      subject: 'quote.requested:9',
      sellerAccountId: 7,
      data: { quote_request_id: 9, quantity: 500, target_price: 300, message: null },
    });
    const responded = quoteV1.QuoteEvent.encode({
      ...envelope,
      streamId: 'quote_9',
      payload: { $case: 'responded', value: { quoteRequest } },
    }).finish();
    expect(decodeSellerQuoteEvent(responded)).toBeUndefined();
  });
});
