import { parseActor } from '@marketplace/eventsourcing';
import { orderV1 } from '@marketplace/proto';
import { actingAccountId, type GrpcService } from '@marketplace/rpc';
import { forbidden, validationError } from '@marketplace/platform';
import {
  fromBuyerMessage,
  fromTrackingMessage,
  toOrderMessage,
  toSessionMessage,
} from '../adapters/order-proto.mapper.js';
import {
  cancelCheckout,
  completeCheckout,
  createCheckout,
  getCheckout,
  quickBuy,
  updateCheckout,
} from '../application/checkout.js';
import type { OrderDependencies } from '../application/order.dependencies.js';
import {
  confirmOrder,
  countOrdersSince,
  getBuyerOrder,
  getSellerOrders,
  markDelivered,
  markShipped,
  openDispute,
  sellerAttention,
} from '../application/orders.js';
import {
  cancelOrder,
  listBuyerOrders,
  listDisputes,
  listSellerOrders,
  resolveDispute,
} from '../application/order-lifecycle.js';
import type { OrderPage } from '../application/order-lifecycle.js';
import type { DisputeReason, DisputeResolution, RequestedAction } from '../domain/order.events.js';
import { DISPUTE_REASONS, DISPUTE_RESOLUTIONS, REQUESTED_ACTIONS } from '../domain/order.events.js';

const contextOf = (
  request: { actor?: orderV1.CreateCheckoutRequest['actor']; correlationId: string },
  traceparent: string | undefined,
) => ({
  actor: parseActor(request.actor),
  correlationId: request.correlationId === '' ? undefined : request.correlationId,
  // The caller's trace context travels on to the events (and from them to the log's headers).
  traceparent,
});

/**
 * A verified account id the gateway must send; 0 (proto's absent) is a caller's bug, reported as such. It must be
 * the account of the call's verified actor (docs/security.md, "Internal calls").
 */
const accountId = (
  request: { readonly actor?: orderV1.CreateCheckoutRequest['actor'] },
  value: number,
  path: 'buyer_account_id' | 'seller_account_id',
): number => {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw validationError(`${path} is required`, [{ path, message: 'must be a positive account id' }]);
  }
  return actingAccountId(request.actor, value, path, [path === 'buyer_account_id' ? 'buyer' : 'seller']);
};

/** The operator's calls (the dispute desk): the verified caller must be the admin (docs/security.md). */
const operatorOnly = (request: { readonly actor?: orderV1.CreateCheckoutRequest['actor'] }): void => {
  if (request.actor?.kind !== 'admin') throw forbidden('only the operator may list and resolve disputes');
};

const reasonOf = (reason: string): DisputeReason => {
  const found = DISPUTE_REASONS.find((known) => known === reason);
  if (!found) {
    throw validationError('invalid reason', [
      { path: 'reason', message: `must be one of ${DISPUTE_REASONS.join(', ')}` },
    ]);
  }
  return found;
};

const requestedActionOf = (action: string): RequestedAction | undefined => {
  if (action === '') return undefined;
  const found = REQUESTED_ACTIONS.find((known) => known === action);
  if (!found) {
    throw validationError('invalid requested_action', [
      { path: 'requested_action', message: `must be one of ${REQUESTED_ACTIONS.join(', ')}` },
    ]);
  }
  return found;
};

const resolutionOf = (resolution: string): DisputeResolution => {
  const found = DISPUTE_RESOLUTIONS.find((known) => known === resolution);
  if (!found) {
    throw validationError('invalid resolution', [
      { path: 'resolution', message: `must be one of ${DISPUTE_RESOLUTIONS.join(', ')}` },
    ]);
  }
  return found;
};

const pageMessage = (page: OrderPage) => ({
  orders: page.orders.map((order) => toOrderMessage(order)),
  nextCursor: page.nextCursor ?? '',
});

/** Exactly one of the two accounts cancels: the buyer's or the seller's. */
const cancellerOf = (request: orderV1.CancelOrderRequest) => {
  const buyer = request.buyerAccountId > 0;
  const seller = request.sellerAccountId > 0;
  if (buyer === seller) {
    throw validationError('exactly one of buyer_account_id and seller_account_id is required', [
      { path: 'buyer_account_id', message: 'exactly one of buyer_account_id and seller_account_id' },
    ]);
  }
  return buyer
    ? { by: 'buyer' as const, accountId: accountId(request, request.buyerAccountId, 'buyer_account_id') }
    : { by: 'seller' as const, accountId: accountId(request, request.sellerAccountId, 'seller_account_id') };
};

/** OrderService over gRPC: maps messages to application inputs and back; AppErrors become statuses in rpc. */
export const orderGrpcService = (deps: OrderDependencies): GrpcService<orderV1.OrderServiceDefinition> => ({
  definition: orderV1.OrderServiceDefinition,
  implementation: {
    async createCheckout(request, context) {
      const session = await createCheckout(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        lines: request.lines.map((line) => ({
          productId: line.productId,
          quantity: line.quantity,
          quoteRequestId: line.quoteRequestId,
        })),
        buyer: fromBuyerMessage(request.buyer),
        buyerAccountId:
          request.buyerAccountId === undefined
            ? undefined
            : accountId(request, request.buyerAccountId, 'buyer_account_id'),
        shippingCountry: request.shippingCountry === '' ? undefined : request.shippingCountry,
        idempotencyKey: request.idempotencyKey,
      });
      return { session: toSessionMessage(session) };
    },
    async completeCheckout(request, context) {
      const { session, orders } = await completeCheckout(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        checkoutId: request.checkoutId,
        buyerAccountId: accountId(request, request.buyerAccountId, 'buyer_account_id'),
        idempotencyKey: request.idempotencyKey,
      });
      return { session: toSessionMessage(session), orders: orders.map((order) => toOrderMessage(order)) };
    },
    async updateCheckout(request, context) {
      const session = await updateCheckout(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        checkoutId: request.checkoutId,
        buyerAccountId: accountId(request, request.buyerAccountId, 'buyer_account_id'),
        lines:
          request.lines.length === 0
            ? undefined
            : request.lines.map((line) => ({
                productId: line.productId,
                quantity: line.quantity,
                quoteRequestId: line.quoteRequestId,
              })),
        buyer: fromBuyerMessage(request.buyer),
        shippingCountry: request.shippingCountry === '' ? undefined : request.shippingCountry,
        idempotencyKey: request.idempotencyKey,
      });
      return { session: toSessionMessage(session) };
    },
    async cancelCheckout(request, context) {
      const session = await cancelCheckout(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        checkoutId: request.checkoutId,
        buyerAccountId: accountId(request, request.buyerAccountId, 'buyer_account_id'),
        idempotencyKey: request.idempotencyKey,
      });
      return { session: toSessionMessage(session) };
    },
    async quickBuy(request, context) {
      const buyer = fromBuyerMessage(request.buyer);
      if (!buyer)
        throw validationError('buyer_email is required', [{ path: 'buyer_email', message: 'is required' }]);
      const { checkoutId, order } = await quickBuy(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        productId: request.productId,
        quantity: request.quantity,
        buyer,
        buyerAccountId: accountId(request, request.buyerAccountId, 'buyer_account_id'),
        shippingCountry: request.shippingCountry === '' ? undefined : request.shippingCountry,
        idempotencyKey: request.idempotencyKey,
        quoteRequestId: request.quoteRequestId,
      });
      return { checkoutId, order: toOrderMessage(order) };
    },
    async getCheckout(request) {
      const { session, orders } = await getCheckout(
        deps,
        request.checkoutId,
        accountId(request, request.buyerAccountId, 'buyer_account_id'),
      );
      return { session: toSessionMessage(session), orders: orders.map((order) => toOrderMessage(order)) };
    },
    async getBuyerOrder(request) {
      const order = await getBuyerOrder(
        deps,
        request.orderId,
        accountId(request, request.buyerAccountId, 'buyer_account_id'),
      );
      return { order: toOrderMessage(order) };
    },
    async confirmOrder(request, context) {
      const order = await confirmOrder(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        orderId: request.orderId,
        buyerAccountId: accountId(request, request.buyerAccountId, 'buyer_account_id'),
      });
      return { order: toOrderMessage(order) };
    },
    async openDispute(request, context) {
      const order = await openDispute(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        orderId: request.orderId,
        buyerAccountId: accountId(request, request.buyerAccountId, 'buyer_account_id'),
        reason: reasonOf(request.reason),
        description: request.description,
        requestedAction: requestedActionOf(request.requestedAction),
        photoUrls: request.photoUrls,
      });
      return { order: toOrderMessage(order) };
    },
    async markShipped(request, context) {
      const { updated, skipped } = await markShipped(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        sellerAccountId: accountId(request, request.sellerAccountId, 'seller_account_id'),
        orderIds: request.orderIds,
        tracking: fromTrackingMessage(request.tracking),
      });
      return { updated: updated.map((order) => toOrderMessage(order)), skipped };
    },
    async markDelivered(request, context) {
      const order = await markDelivered(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        orderId: request.orderId,
        sellerAccountId: accountId(request, request.sellerAccountId, 'seller_account_id'),
      });
      return { order: toOrderMessage(order) };
    },
    async getSellerOrders(request) {
      const orders = await getSellerOrders(
        deps,
        accountId(request, request.sellerAccountId, 'seller_account_id'),
        request.orderIds,
      );
      return { orders: orders.map((order) => toOrderMessage(order)) };
    },
    async sellerAttention(request) {
      const { atRisk, issues, newOrders } = await sellerAttention(deps, {
        sellerAccountId: accountId(request, request.sellerAccountId, 'seller_account_id'),
        windowHours: request.windowHours,
        limit: request.limit,
      });
      return {
        atRisk: atRisk.orders.map((order) => toOrderMessage(order)),
        atRiskTotal: atRisk.total,
        issuesReported: issues.orders.map((order) => toOrderMessage(order)),
        issuesReportedTotal: issues.total,
        newOrders: newOrders.orders.map((order) => toOrderMessage(order)),
        newOrdersTotal: newOrders.total,
      };
    },
    async countOrdersSince(request) {
      return { count: await countOrdersSince(deps, request.sinceMs) };
    },
    async listBuyerOrders(request) {
      return pageMessage(
        await listBuyerOrders(deps, {
          buyerAccountId: accountId(request, request.buyerAccountId, 'buyer_account_id'),
          status: request.status,
          limit: request.limit,
          cursor: request.cursor,
        }),
      );
    },
    async listSellerOrders(request) {
      return pageMessage(
        await listSellerOrders(deps, {
          sellerAccountId: accountId(request, request.sellerAccountId, 'seller_account_id'),
          status: request.status,
          limit: request.limit,
          cursor: request.cursor,
        }),
      );
    },
    async cancelOrder(request, context) {
      const order = await cancelOrder(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        ...cancellerOf(request),
        orderId: request.orderId,
        reason: request.reason === '' ? undefined : request.reason,
      });
      return { order: toOrderMessage(order) };
    },
    async listDisputes(request) {
      operatorOnly(request);
      return pageMessage(
        await listDisputes(deps, { status: request.status, limit: request.limit, cursor: request.cursor }),
      );
    },
    async resolveDispute(request, context) {
      operatorOnly(request);
      const order = await resolveDispute(deps, {
        ...contextOf(request, context.metadata.get('traceparent')),
        orderId: request.orderId,
        resolution: resolutionOf(request.resolution),
        refundCents: request.refundCents,
        note: request.note,
      });
      return { order: toOrderMessage(order) };
    },
  },
});
