import type { QueuedMail } from '@marketplace/outgoing-mail';
import { escapeHtml, toIso } from '@marketplace/platform';
import type { Order } from './order.events.js';

// The text of the order service's emails (docs/specification.md, "Order lifecycle", "Disputes").

/** What the operator is told about a dispute: the buyer's whole report and the order it concerns. */
export interface DisputeNotice {
  readonly orderId: number;
  readonly productId: string;
  readonly productName: string;
  readonly quantity: number;
  readonly totalCents: number;
  readonly currency: string;
  readonly sellerAccountId: number;
  readonly buyerAccountId: number;
  readonly buyerEmail: string;
  readonly reason: string;
  readonly description: string;
  readonly requestedAction?: string | undefined;
  readonly photoUrls: readonly string[];
  readonly reportedAt: number;
}

/** A party of an order and the address its emails go to. */
export interface Party {
  readonly to: string;
  readonly role: 'buyer' | 'seller';
}

/** An email to one party of an order about one of its events. */
export const mailTo = (
  party: Party,
  kind: string,
  order: Order,
  subject: string,
  lines: readonly string[],
): QueuedMail => ({
  to: party.to,
  subject,
  text: `${lines.join('\n')}\n`,
  html: `<pre>${escapeHtml(lines.join('\n'))}</pre>`,
  // Stable per order, event and party, so a queued notice is never queued twice.
  messageId: `<order-${order.orderId}-${kind}-${party.role}@marketplace.invalid>`,
});

/** The order in one line, as every order email starts. */
export const orderLine = (order: Order): string =>
  `Order ${order.orderId}: ${order.quantity} x ${order.productName} (${order.productId}), total ${order.totalCents} ${order.currency} cents`;

/** The operator's email about a dispute: the buyer's whole report and the order it concerns. */
export const disputeNoticeEmail = (notice: DisputeNotice, to: string) => {
  const lines = [
    `Order ${notice.orderId}: ${notice.quantity} x ${notice.productName} (${notice.productId}), total ${notice.totalCents} ${notice.currency} cents`,
    `Seller account ${notice.sellerAccountId}; buyer account ${notice.buyerAccountId}${notice.buyerEmail ? ` <${notice.buyerEmail}>` : ''}`,
    `Reason: ${notice.reason}`,
    `Requested action: ${notice.requestedAction ?? 'none given'}`,
    `Reported at: ${toIso(notice.reportedAt)}`,
    '',
    notice.description,
    '',
    ...(notice.photoUrls.length > 0 ? ['Photos:', ...notice.photoUrls] : ['No photos.']),
  ];
  return {
    to,
    subject: `Dispute on order ${notice.orderId}: ${notice.reason}`,
    text: `${lines.join('\n')}\n\nPayload: ${JSON.stringify(notice)}\n`,
    html: `<pre>${escapeHtml(lines.join('\n'))}</pre><p>Payload:</p><pre>${escapeHtml(JSON.stringify(notice, null, 2))}</pre>`,
    // Stable, so a repeat after a crash between sending and recording is recognisable.
    messageId: `<dispute-order-${notice.orderId}@marketplace.invalid>`,
  };
};
