import type { orderV1 } from '@marketplace/proto';
import type { CheckoutLine, CheckoutSession } from '../domain/checkout.events.js';
import type {
  BuyerContact,
  Cancellation,
  Issue,
  Order,
  Resolution,
  Tracking,
} from '../domain/order.events.js';

/**
 * Domain values ⇄ protobuf messages, shared by the event codec and the gRPC transport so the two never disagree.
 * Protobuf has no absent strings: an absent name, company or tracking field travels as ''.
 */

const orEmpty = (value: string | undefined): string => value ?? '';
const orUndefined = (value: string): string | undefined => (value === '' ? undefined : value);

export const toBuyerMessage = (buyer: BuyerContact | undefined): orderV1.Buyer => ({
  email: orEmpty(buyer?.email),
  name: orEmpty(buyer?.name),
  company: orEmpty(buyer?.company),
});

export const fromBuyerMessage = (buyer: orderV1.Buyer | undefined): BuyerContact | undefined =>
  buyer === undefined || buyer.email === ''
    ? undefined
    : { email: buyer.email, name: orUndefined(buyer.name), company: orUndefined(buyer.company) };

export const toTrackingMessage = (tracking: Tracking): orderV1.Tracking => ({
  trackingNumber: orEmpty(tracking.trackingNumber),
  trackingUrl: orEmpty(tracking.trackingUrl),
  carrierName: orEmpty(tracking.carrierName),
});

export const fromTrackingMessage = (tracking: orderV1.Tracking | undefined): Tracking => ({
  trackingNumber: orUndefined(tracking?.trackingNumber ?? ''),
  trackingUrl: orUndefined(tracking?.trackingUrl ?? ''),
  carrierName: orUndefined(tracking?.carrierName ?? ''),
});

export const toIssueMessage = (issue: Issue): orderV1.Issue => ({
  reason: issue.reason,
  description: issue.description,
  requestedAction: orEmpty(issue.requestedAction),
  photoUrls: [...issue.photoUrls],
  reportedAtMs: issue.reportedAt,
});

export const toCancellationMessage = (cancellation: Cancellation): orderV1.Cancellation => ({
  by: cancellation.by,
  reason: orEmpty(cancellation.reason),
  cancelledAtMs: cancellation.cancelledAt,
});

export const toResolutionMessage = (resolution: Resolution): orderV1.Resolution => ({
  resolution: resolution.resolution,
  refundCents: resolution.refundCents,
  note: resolution.note,
  resolvedAtMs: resolution.resolvedAt,
});

export const toOrderMessage = (order: Order, version = 0): orderV1.Order => ({
  orderId: order.orderId,
  checkoutId: order.checkoutId,
  productId: order.productId,
  productName: order.productName,
  sellerAccountId: order.sellerAccountId,
  buyerAccountId: order.buyerAccountId,
  buyer: toBuyerMessage(order.buyer),
  quantity: order.quantity,
  unitPriceCents: order.unitPriceCents,
  totalCents: order.totalCents,
  freightCents: order.freightCents ?? 0,
  currency: order.currency,
  quoteRequestId: order.quoteRequestId,
  shippingCountry: orEmpty(order.shippingCountry),
  paymentTerms: order.paymentTerms,
  status: order.status,
  placedAtMs: order.placedAt,
  shipByMs: order.shipBy,
  tracking: order.tracking && toTrackingMessage(order.tracking),
  shippedAtMs: order.shippedAt,
  deliveredAtMs: order.deliveredAt,
  inspectionDeadlineMs: order.inspectionDeadline,
  completedAtMs: order.completedAt,
  issue: order.issue && toIssueMessage(order.issue),
  reservationId: order.reservationId,
  version,
  cancellation: order.cancellation && toCancellationMessage(order.cancellation),
  resolution: order.resolution && toResolutionMessage(order.resolution),
});

const toLineMessage = (line: CheckoutLine): orderV1.CheckoutLine => ({
  productId: line.productId,
  productName: line.productName,
  sellerAccountId: line.sellerAccountId,
  quantity: line.quantity,
  unitPriceCents: line.unitPriceCents,
  lineTotalCents: line.lineTotalCents,
  quoteRequestId: line.quoteRequestId,
  freightCents: line.freightCents ?? 0,
});

export const toSessionMessage = (session: CheckoutSession, version = 0): orderV1.CheckoutSession => ({
  checkoutId: session.checkoutId,
  status: session.status,
  lines: session.lines.map(toLineMessage),
  subtotalCents: session.subtotalCents,
  freightCents: session.freightCents ?? 0,
  currency: session.currency,
  messages: [...session.messages],
  buyer: toBuyerMessage(session.buyer),
  buyerAccountId: session.buyerAccountId,
  shippingCountry: orEmpty(session.shippingCountry),
  createdAtMs: session.createdAt,
  expiresAtMs: session.expiresAt,
  orderIds: [...session.orderIds],
  version,
});
