import type { orderV1 } from '@marketplace/proto';
import { toIso } from '@marketplace/platform';
import type { CheckoutSessionView } from './checkout.schema.js';
import type { OrderView } from './order.schema.js';

const isoOrNull = (ms: number | undefined): string | null => (ms === undefined ? null : toIso(ms));
const orNull = (text: string | undefined): string | null => (text === undefined || text === '' ? null : text);

/** Order messages as buyers and sellers read them: snake_case, amounts in cents, times in ISO 8601. */
export const orderView = (order: orderV1.Order): OrderView => ({
  order_id: order.orderId,
  status: order.status as OrderView['status'],
  product_id: order.productId,
  product_name: order.productName,
  seller_id: order.sellerAccountId,
  quantity: order.quantity,
  unit_price: order.unitPriceCents,
  freight: order.freightCents,
  total: order.totalCents,
  currency: order.currency,
  quote_request_id: order.quoteRequestId ?? null,
  shipping_country: orNull(order.shippingCountry),
  payment_terms: order.paymentTerms,
  placed_at: toIso(order.placedAtMs),
  ship_by: toIso(order.shipByMs),
  tracking: order.tracking
    ? {
        tracking_number: orNull(order.tracking.trackingNumber),
        tracking_url: orNull(order.tracking.trackingUrl),
        carrier_name: orNull(order.tracking.carrierName),
      }
    : null,
  shipped_at: isoOrNull(order.shippedAtMs),
  delivered_at: isoOrNull(order.deliveredAtMs),
  inspection_deadline: isoOrNull(order.inspectionDeadlineMs),
  completed_at: isoOrNull(order.completedAtMs),
  issue: order.issue
    ? {
        reason: order.issue.reason,
        description: order.issue.description,
        requested_action: orNull(order.issue.requestedAction),
        photo_urls: order.issue.photoUrls,
        reported_at: toIso(order.issue.reportedAtMs),
      }
    : null,
  cancellation: order.cancellation
    ? {
        by: order.cancellation.by as 'buyer' | 'seller',
        reason: orNull(order.cancellation.reason),
        cancelled_at: toIso(order.cancellation.cancelledAtMs),
      }
    : null,
  resolution: order.resolution
    ? {
        resolution: order.resolution.resolution as NonNullable<OrderView['resolution']>['resolution'],
        refund_amount: order.resolution.refundCents,
        note: order.resolution.note,
        resolved_at: toIso(order.resolution.resolvedAtMs),
      }
    : null,
});

export const checkoutSessionView = (session: orderV1.CheckoutSession): CheckoutSessionView => ({
  id: session.checkoutId,
  status: session.status as CheckoutSessionView['status'],
  line_items: session.lines.map((line) => ({
    product_id: line.productId,
    title: line.productName,
    seller_id: line.sellerAccountId,
    quantity: line.quantity,
    unit_price: line.unitPriceCents,
    line_total: line.lineTotalCents,
    freight: line.freightCents,
    ...(line.quoteRequestId === undefined ? {} : { quote_request_id: line.quoteRequestId }),
  })),
  // Payment is on invoice terms: no tax is charged through the marketplace; freight is the seller's terms.
  totals: {
    subtotal: session.subtotalCents,
    freight: session.freightCents,
    total: session.subtotalCents + session.freightCents,
  },
  currency: session.currency,
  messages: session.messages,
  payment_terms: 'net_30',
  ...(session.shippingCountry === '' ? {} : { shipping_country: session.shippingCountry }),
  expires_at: toIso(session.expiresAtMs),
  order_ids: session.orderIds,
});
