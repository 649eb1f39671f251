import { Router } from 'express';
import { z } from 'zod';
import { conflict, notFound } from '@marketplace/platform';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import type { OrderOperations } from './order.operations.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import {
  cancelReasonSchema,
  INVALID_ORDER_ID,
  orderIdParamsSchema,
  orderListQuerySchema,
  orderPageSchema,
  orderViewSchema,
  trackingBodySchema,
} from './order.schema.js';

/** A seller says why it cannot fulfil: the buyer is told. */
const sellerCancelBodySchema = z.strictObject({
  reason: cancelReasonSchema.trim().min(1, 'must not be empty'),
});
import { parseOrThrow } from '../../edge/schemas/validate.js';
import { orderIdOfPath } from '../../edge/http/path-ids.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/** The seller's fulfilment of one order (the bulk tools cover many). */
export const sellerOrdersRoutes = (
  problems: Problems,
  orders: OrderOperations,
  identity: IdentityService,
  bodyLimitBytes: number,
): Router => {
  const router = Router();
  const seller = authenticate(identity, { required: true });
  router
    .route('/api/seller/orders')
    .get(seller, async (req, res) => {
      const query = parseOrThrow(orderListQuerySchema, req.query, 'query parameters');
      res.json(await orders.listSellers(principalOf(req), query));
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/seller/orders/:id/cancel')
    .post(seller, ...jsonBody(bodyLimitBytes), async (req, res) => {
      const { id } = parseOrThrow(orderIdParamsSchema, req.params, 'order id');
      const body = parseOrThrow(sellerCancelBodySchema, req.body, 'cancellation');
      res.json(await orders.cancel(principalOf(req), 'seller', Number(id), body.reason, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/seller/orders/:id')
    .get(seller, async (req, res) => {
      const id = orderIdOfPath(req.params);
      res.json(await orders.sellerOrder(principalOf(req), id));
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/seller/orders/:id/mark-shipped')
    .post(seller, ...jsonBody(bodyLimitBytes), async (req, res) => {
      const id = orderIdOfPath(req.params);
      const tracking = parseOrThrow(trackingBodySchema, req.body, 'tracking');
      const orderId = id;
      const result = await orders.markShipped(principalOf(req), [orderId], tracking, requestIdOf(req));
      const shipped = result.updated[0];
      if (shipped) {
        res.json(shipped);
        return;
      }
      // One order: its skip reason is the answer.
      const skipped = result.skipped[0];
      throw skipped?.reason === 'not_found'
        ? notFound(`no order ${orderId}`)
        : conflict(skipped?.message ?? '');
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/seller/orders/:id/mark-delivered')
    .post(seller, async (req, res) => {
      const id = orderIdOfPath(req.params);
      res.json(await orders.markDelivered(principalOf(req), id, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

const sellerErrors = {
  401: 'Missing or invalid X-MCP-API-Key',
  403: 'Not a seller account',
  404: 'No such order of this seller (another seller’s order, or an id beyond 2^53 − 1, is not found either)',
} as const;

export const sellerOrdersRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/api/seller/orders',
    operationId: 'listSellerOrders',
    summary: 'The seller’s own orders, newest first (get_seller_orders over REST)',
    description:
      'Optionally one status only (`?status=awaiting_shipment` for what to ship); pages of `limit` (1-100, ' +
      'default 20): pass `next_cursor` as `cursor` for the next page.',
    tags: ['seller orders'],
    auth: 'api_key',
    query: orderListQuerySchema,
    responses: {
      200: { description: 'A page of orders', schema: orderPageSchema },
      400: 'Invalid status, limit or cursor',
      401: sellerErrors[401],
      403: sellerErrors[403],
    },
  },
  {
    method: 'post',
    path: '/api/seller/orders/{id}/cancel',
    operationId: 'cancelSellerOrder',
    summary: 'Cancel an order the seller cannot fulfil (seller_cancel_order over REST)',
    description:
      'Only before shipment. The order becomes cancelled, its units go back into stock and both parties are ' +
      'emailed the reason. Cancelling a cancelled order answers it unchanged.',
    tags: ['seller orders'],
    auth: 'api_key',
    pathParameters: orderIdParamsSchema,
    body: sellerCancelBodySchema,
    responses: {
      200: { description: 'The cancelled order', schema: orderViewSchema },
      400: 'Invalid order id, or a reason missing or over 1000 characters',
      ...sellerErrors,
      409: 'The order was shipped already (or is past shipment)',
    },
  },
  {
    method: 'get',
    path: '/api/seller/orders/{id}',
    operationId: 'getSellerOrder',
    summary: 'One of the seller’s orders, with its ship-by deadline',
    tags: ['seller orders'],
    auth: 'api_key',
    pathParameters: orderIdParamsSchema,
    responses: {
      200: { description: 'The order', schema: orderViewSchema },
      400: INVALID_ORDER_ID,
      ...sellerErrors,
    },
  },
  {
    method: 'post',
    path: '/api/seller/orders/{id}/mark-shipped',
    operationId: 'markOrderShipped',
    summary: 'Mark an order shipped with its tracking details',
    description:
      'Repeating the call with the same tracking changes nothing; different tracking after shipping is 409.',
    tags: ['seller orders'],
    auth: 'api_key',
    pathParameters: orderIdParamsSchema,
    body: trackingBodySchema,
    responses: {
      200: { description: 'The shipped order', schema: orderViewSchema },
      400: 'Invalid order id, or tracking details too long or not a URL',
      ...sellerErrors,
      409: 'The order was shipped already, or cannot be shipped',
    },
  },
  {
    method: 'post',
    path: '/api/seller/orders/{id}/mark-delivered',
    operationId: 'markOrderDelivered',
    summary: 'Mark a shipped order delivered: the buyer’s 48 h inspection window starts',
    tags: ['seller orders'],
    auth: 'api_key',
    pathParameters: orderIdParamsSchema,
    responses: {
      200: {
        description: 'The delivered order',
        schema: orderViewSchema.extend({ inspection_deadline: z.string() }),
      },
      400: INVALID_ORDER_ID,
      ...sellerErrors,
      409: 'The order is not shipped',
    },
  },
];
