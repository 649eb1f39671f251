import type { orderV1, quoteV1 } from '@marketplace/proto';
import type { Clock } from '@marketplace/platform';
import { forbidden, notFound, systemClock, toIso, unauthenticated } from '@marketplace/platform';
import type { OrderClient } from './order.client.js';
import type { Principal } from '../../edge/account.js';
import { actorOf, requireSeller } from '../../edge/account.js';
import type { CheckoutBody } from './checkout.schema.js';
import type { ResolveDisputeBody, SkipReason, TrackingBody } from './order.schema.js';
import { SKIP_REASONS } from './order.schema.js';
import { ordersCsv } from './order-csv.js';
import { checkoutSessionView, orderView } from './order.views.js';

const HOUR_MS = 60 * 60 * 1_000;

/** A pending quote request as the seller's inbox lists it. */
export interface PendingQuote {
  readonly quote_request_id: number;
  readonly product_id: string;
  readonly product_name: string;
  readonly quantity: number;
  readonly target_price: number | null;
  readonly buyer_email: string;
  readonly created_at: string;
}

/** The seller's pending quote requests received since a time, newest first (the quote service). */
export type PendingQuotesOf = (
  sellerAccountId: number,
  sinceMs: number,
  limit: number,
) => Promise<{ readonly total: number; readonly items: readonly PendingQuote[] }>;

/** PendingQuotesOf over the quote service's ListQuoteRequests. */
export const pendingQuotesVia =
  (
    listQuoteRequests: (
      request: quoteV1.ListQuoteRequestsRequest,
    ) => Promise<quoteV1.ListQuoteRequestsResponse>,
  ): PendingQuotesOf =>
  async (sellerAccountId, sinceMs, limit) => {
    const { quoteRequests, total } = await listQuoteRequests({
      actor: { kind: 'seller', id: String(sellerAccountId) },
      sellerAccountId,
      status: 'pending',
      limit,
      createdSinceMs: sinceMs,
    });
    return {
      total,
      items: quoteRequests.map((quote) => ({
        quote_request_id: quote.quoteRequestId,
        product_id: quote.productId,
        product_name: quote.productName,
        quantity: quote.quantity,
        target_price: quote.targetPriceCents ?? null,
        buyer_email: quote.buyer?.email ?? '',
        created_at: toIso(quote.createdAtMs),
      })),
    };
  };

/** The buyer behind an API key or agent token; anonymous callers and sellers are refused. */
export const requireBuyer = (principal: Principal | undefined, what: string): Principal => {
  if (principal === undefined) {
    throw unauthenticated(`${what} needs the buyer's X-MCP-API-Key or X-Agent-Token`);
  }
  if (principal.role !== 'buyer') throw forbidden(`only buyer accounts can ${what}`);
  return principal;
};

const trackingOf = (body: TrackingBody): orderV1.Tracking => ({
  trackingNumber: body.tracking_number ?? '',
  trackingUrl: body.tracking_url ?? '',
  carrierName: body.carrier_name ?? '',
});

const skipReasonOf = (reason: string): SkipReason => {
  const known = SKIP_REASONS.find((candidate) => candidate === reason);
  if (!known) throw new Error(`MarkShipped answered an unknown skip reason ${reason}`);
  return known;
};

/** A page of orders as asked: an optional status, the page size, the previous page's cursor. */
export interface OrderPageRequest {
  readonly status?: string | undefined;
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** Proto has no absent strings: no status and no cursor travel as ''. */
const pageRequestOf = (page: OrderPageRequest) => ({
  status: page.status ?? '',
  limit: page.limit,
  cursor: page.cursor ?? '',
});

/** The operator behind ADMIN_TOKEN, as the order events record it. */
const OPERATOR = { kind: 'admin', id: 'operator' } as const;

const pageView = (page: { orders: orderV1.Order[]; nextCursor: string }) => ({
  orders: page.orders.map(orderView),
  next_cursor: page.nextCursor === '' ? null : page.nextCursor,
});

/** Checkout, orders and the seller's fulfilment, shared by REST and the agent tools. */
export class OrderOperations {
  constructor(
    private readonly orders: OrderClient,
    /** The seller's pending quote requests, from the quote service, for the inbox digest. */
    private readonly pendingQuotesOf: PendingQuotesOf,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Anyone may price a checkout; a buyer's key or token binds the session to the buyer. Sellers do not buy. With
   * an idempotency key, a repeat answers the session the key created.
   */
  async createCheckout(
    principal: Principal | undefined,
    body: CheckoutBody,
    correlationId: string,
    idempotencyKey?: string,
  ) {
    if (principal !== undefined && principal.role !== 'buyer')
      throw forbidden('only buyer accounts check out');
    const { session } = await this.orders.rpc.createCheckout({
      actor: actorOf(principal),
      lines: body.line_items.map((line) => ({
        productId: line.product_id,
        quantity: line.quantity,
        quoteRequestId: line.quote_request_id,
      })),
      buyer: {
        email: body.buyer?.email ?? '',
        name: body.buyer?.name ?? '',
        company: body.buyer?.company ?? '',
      },
      buyerAccountId: principal?.accountId,
      shippingCountry: body.shipping_country ?? '',
      correlationId,
      idempotencyKey,
    });
    if (!session) throw new Error('CreateCheckout answered without a session');
    return checkoutSessionView(session);
  }

  /** Placing orders commits the buyer to pay on invoice terms, so it needs a verified buyer. */
  async completeCheckout(
    principal: Principal | undefined,
    checkoutId: string,
    correlationId: string,
    idempotencyKey?: string,
  ) {
    const buyer = requireBuyer(principal, 'complete a checkout');
    const { session, orders } = await this.orders.completeCheckout({
      actor: actorOf(buyer),
      checkoutId,
      buyerAccountId: buyer.accountId,
      correlationId,
      idempotencyKey,
    });
    if (!session) throw new Error('CompleteCheckout answered without a session');
    return { checkout: checkoutSessionView(session), orders: orders.map(orderView) };
  }

  /**
   * The buyer's own open session priced again: new lines, buyer or shipping country, each kept when absent. A
   * session of another caller, or priced anonymously, is a 404; one completing, completed, canceled or expired a 409.
   */
  async updateCheckout(
    principal: Principal | undefined,
    checkoutId: string,
    changes: Partial<CheckoutBody>,
    correlationId: string,
    idempotencyKey?: string,
  ) {
    const buyer = requireBuyer(principal, 'change a checkout session');
    const { session } = await this.orders.rpc.updateCheckout({
      actor: actorOf(buyer),
      checkoutId,
      buyerAccountId: buyer.accountId,
      lines: (changes.line_items ?? []).map((line) => ({
        productId: line.product_id,
        quantity: line.quantity,
        quoteRequestId: line.quote_request_id,
      })),
      buyer:
        changes.buyer === undefined
          ? undefined
          : {
              email: changes.buyer.email,
              name: changes.buyer.name ?? '',
              company: changes.buyer.company ?? '',
            },
      shippingCountry: changes.shipping_country ?? '',
      correlationId,
      idempotencyKey,
    });
    if (!session) throw new Error('UpdateCheckout answered without a session');
    return checkoutSessionView(session);
  }

  /** Cancels the buyer's own open session; a 409 once it is completing or completed. */
  async cancelCheckout(
    principal: Principal | undefined,
    checkoutId: string,
    correlationId: string,
    idempotencyKey?: string,
  ) {
    const buyer = requireBuyer(principal, 'cancel a checkout session');
    const { session } = await this.orders.rpc.cancelCheckout({
      actor: actorOf(buyer),
      checkoutId,
      buyerAccountId: buyer.accountId,
      correlationId,
      idempotencyKey,
    });
    if (!session) throw new Error('CancelCheckout answered without a session');
    return checkoutSessionView(session);
  }

  /** The buyer's own session and its orders; another caller's, or an anonymously priced one, is a 404. */
  async getCheckout(principal: Principal | undefined, checkoutId: string) {
    const buyer = requireBuyer(principal, 'read a checkout session');
    const { session, orders } = await this.orders.rpc.getCheckout({
      actor: actorOf(buyer),
      checkoutId,
      buyerAccountId: buyer.accountId,
    });
    if (!session) throw new Error('GetCheckout answered without a session');
    return { checkout: checkoutSessionView(session), orders: orders.map(orderView) };
  }

  async quickBuy(
    principal: Principal | undefined,
    input: {
      readonly product_id: string;
      readonly quantity: number;
      readonly buyer_email: string;
      readonly buyer_name?: string | undefined;
      readonly buyer_company?: string | undefined;
      readonly shipping_country?: string | undefined;
      /** A repeat answers the order the key placed, finishing it first if the first call was interrupted. */
      readonly idempotency_key?: string | undefined;
      /** The buyer's agreed quote of this product: bought at its price, used once. */
      readonly quote_request_id?: number | undefined;
    },
    correlationId: string,
  ) {
    const buyer = requireBuyer(principal, 'buy');
    const { order, checkoutId } = await this.orders.quickBuy({
      actor: actorOf(buyer),
      productId: input.product_id,
      quantity: input.quantity,
      buyer: { email: input.buyer_email, name: input.buyer_name ?? '', company: input.buyer_company ?? '' },
      buyerAccountId: buyer.accountId,
      shippingCountry: input.shipping_country ?? '',
      correlationId,
      idempotencyKey: input.idempotency_key,
      quoteRequestId: input.quote_request_id,
    });
    if (!order) throw new Error('QuickBuy answered without an order');
    return { checkout_id: checkoutId, order: orderView(order) };
  }

  async buyerOrder(principal: Principal | undefined, orderId: number) {
    const buyer = requireBuyer(principal, 'read an order');
    const { order } = await this.orders.rpc.getBuyerOrder({
      actor: actorOf(buyer),
      orderId,
      buyerAccountId: buyer.accountId,
    });
    if (!order) throw new Error('GetBuyerOrder answered without an order');
    return orderView(order);
  }

  async confirm(principal: Principal | undefined, orderId: number, correlationId: string) {
    const buyer = requireBuyer(principal, 'confirm an order');
    const { order } = await this.orders.rpc.confirmOrder({
      actor: actorOf(buyer),
      orderId,
      buyerAccountId: buyer.accountId,
      correlationId,
    });
    if (!order) throw new Error('ConfirmOrder answered without an order');
    return orderView(order);
  }

  async openDispute(
    principal: Principal | undefined,
    input: {
      readonly order_id: number;
      readonly reason: string;
      readonly description: string;
      readonly requested_action?: string | undefined;
      readonly photo_urls?: readonly string[] | undefined;
    },
    correlationId: string,
  ) {
    const buyer = requireBuyer(principal, 'open a dispute');
    const { order } = await this.orders.rpc.openDispute({
      actor: actorOf(buyer),
      orderId: input.order_id,
      buyerAccountId: buyer.accountId,
      reason: input.reason,
      description: input.description,
      requestedAction: input.requested_action ?? '',
      photoUrls: [...(input.photo_urls ?? [])],
      correlationId,
    });
    if (!order) throw new Error('OpenDispute answered without an order');
    return orderView(order);
  }

  async markShipped(
    principal: Principal | undefined,
    orderIds: readonly number[],
    tracking: TrackingBody,
    correlationId: string,
  ) {
    const seller = requireSeller(principal, 'mark orders shipped');
    const { updated, skipped } = await this.orders.rpc.markShipped({
      actor: actorOf(seller),
      sellerAccountId: seller.accountId,
      orderIds: [...orderIds],
      tracking: trackingOf(tracking),
      correlationId,
    });
    return {
      updated: updated.map(orderView),
      updated_order_ids: updated.map((order) => order.orderId),
      skipped: skipped.map(({ orderId, reason, message }) => ({
        order_id: orderId,
        reason: skipReasonOf(reason),
        message,
      })),
    };
  }

  async markDelivered(principal: Principal | undefined, orderId: number, correlationId: string) {
    const seller = requireSeller(principal, 'mark orders delivered');
    const { order } = await this.orders.rpc.markDelivered({
      actor: actorOf(seller),
      sellerAccountId: seller.accountId,
      orderId,
      correlationId,
    });
    if (!order) throw new Error('MarkDelivered answered without an order');
    return orderView(order);
  }

  /** One of the seller's orders; another seller's reads like a missing one. */
  async sellerOrder(principal: Principal | undefined, orderId: number) {
    const seller = requireSeller(principal, 'read its orders');
    const { orders } = await this.orders.rpc.getSellerOrders({
      actor: actorOf(seller),
      sellerAccountId: seller.accountId,
      orderIds: [orderId],
    });
    const order = orders[0];
    if (!order) throw notFound(`no order ${orderId}`);
    return orderView(order);
  }

  /** list_my_orders and GET /api/orders: the buyer's own orders, newest first. */
  async listMine(principal: Principal | undefined, page: OrderPageRequest) {
    const buyer = requireBuyer(principal, 'list its orders');
    return pageView(
      await this.orders.rpc.listBuyerOrders({
        actor: actorOf(buyer),
        buyerAccountId: buyer.accountId,
        ...pageRequestOf(page),
      }),
    );
  }

  /** get_seller_orders and GET /api/seller/orders: the seller's own orders, newest first. */
  async listSellers(principal: Principal | undefined, page: OrderPageRequest) {
    const seller = requireSeller(principal, 'list its orders');
    return pageView(
      await this.orders.rpc.listSellerOrders({
        actor: actorOf(seller),
        sellerAccountId: seller.accountId,
        ...pageRequestOf(page),
      }),
    );
  }

  /**
   * Cancels the caller's order awaiting shipment (docs/specification.md, "Order lifecycle"): a buyer its purchase,
   * a seller an order it cannot fulfil. Another account's order is not found; a repeat answers it unchanged.
   */
  async cancel(
    principal: Principal | undefined,
    by: 'buyer' | 'seller',
    orderId: number,
    reason: string | undefined,
    correlationId: string,
  ) {
    const caller =
      by === 'buyer'
        ? requireBuyer(principal, 'cancel an order')
        : requireSeller(principal, 'cancel an order');
    const { order } = await this.orders.rpc.cancelOrder({
      actor: actorOf(caller),
      orderId,
      buyerAccountId: by === 'buyer' ? caller.accountId : 0,
      sellerAccountId: by === 'seller' ? caller.accountId : 0,
      reason: reason ?? '',
      correlationId,
    });
    if (!order) throw new Error('CancelOrder answered without an order');
    return orderView(order);
  }

  /** The operator's list of disputed orders (the admin API checked the token). */
  async listDisputes(page: OrderPageRequest & { readonly status: string }) {
    return pageView(await this.orders.rpc.listDisputes({ actor: OPERATOR, ...pageRequestOf(page) }));
  }

  /** The operator resolves a disputed order (the admin API checked the token). */
  async resolveDispute(orderId: number, body: ResolveDisputeBody, correlationId: string) {
    const { order } = await this.orders.rpc.resolveDispute({
      actor: OPERATOR,
      orderId,
      resolution: body.resolution,
      refundCents: body.refund_amount,
      note: body.note,
      correlationId,
    });
    if (!order) throw new Error('ResolveDispute answered without an order');
    return orderView(order);
  }

  /** bulk_export_orders: the seller's orders among the ids as CSV; the other ids are listed, not exported. */
  async exportCsv(principal: Principal | undefined, orderIds: readonly number[]) {
    const seller = requireSeller(principal, 'export orders');
    const { orders } = await this.orders.rpc.getSellerOrders({
      actor: actorOf(seller),
      sellerAccountId: seller.accountId,
      orderIds: [...orderIds],
    });
    const exported = new Set(orders.map((order) => order.orderId));
    return {
      csv: ordersCsv(orders),
      row_count: orders.length,
      not_found_order_ids: [...new Set(orderIds)].filter((orderId) => !exported.has(orderId)),
    };
  }

  /**
   * seller_inbox_summarise: quote requests still pending and orders awaiting shipment that arrived within the
   * window, open orders whose ship-by deadline falls within the window (overdue ones first), and every order
   * with a reported issue.
   */
  async inboxSummary(principal: Principal | undefined, windowHours: number, limit: number) {
    const seller = requireSeller(principal, 'read its inbox');
    const now = this.clock.now();
    const [quotes, attention] = await Promise.all([
      this.pendingQuotesOf(seller.accountId, now - windowHours * HOUR_MS, limit),
      this.orders.rpc.sellerAttention({
        actor: actorOf(seller),
        sellerAccountId: seller.accountId,
        windowHours,
        limit,
      }),
    ]);
    const atRisk = attention.atRisk.map((order) => ({
      order_id: order.orderId,
      product_id: order.productId,
      product_name: order.productName,
      quantity: order.quantity,
      ship_by: toIso(order.shipByMs),
      hours_left: Math.round(((order.shipByMs - now) / HOUR_MS) * 10) / 10,
      overdue: order.shipByMs < now,
    }));
    const newOrders = attention.newOrders.map((order) => ({
      order_id: order.orderId,
      product_id: order.productId,
      product_name: order.productName,
      quantity: order.quantity,
      total: order.totalCents,
      placed_at: toIso(order.placedAtMs),
      ship_by: toIso(order.shipByMs),
    }));
    const issues = attention.issuesReported.map((order) => ({
      order_id: order.orderId,
      product_id: order.productId,
      product_name: order.productName,
      reason: order.issue?.reason ?? '',
      requested_action: order.issue?.requestedAction || null,
      description: order.issue?.description ?? '',
      reported_at: toIso(order.issue?.reportedAtMs ?? 0),
    }));
    return {
      window_hours: windowHours,
      generated_at: toIso(now),
      summary:
        `${quotes.total} pending quote request(s) and ${attention.newOrdersTotal} new order(s) in the last ${windowHours} h, ` +
        `${attention.atRiskTotal} order(s) to ship within ${windowHours} h ` +
        `(${atRisk.filter((order) => order.overdue).length} shown overdue), ` +
        `${attention.issuesReportedTotal} order(s) with a reported issue.`,
      pending_quotes: { total: quotes.total, items: [...quotes.items] },
      new_orders: { total: attention.newOrdersTotal, items: newOrders },
      at_risk_orders: { total: attention.atRiskTotal, items: atRisk },
      issues_reported: { total: attention.issuesReportedTotal, items: issues },
    };
  }
}
