import { Router } from 'express';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import type { OrderOperations } from './order.operations.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { jsonBody, optionalJsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import {
  cancelBodySchema,
  disputeBodySchema,
  INVALID_ORDER_ID,
  orderIdParamsSchema,
  orderListQuerySchema,
  orderPageSchema,
  orderViewSchema,
} from './order.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import { orderIdOfPath } from '../../edge/http/path-ids.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/** The buyer's orders: status, early confirmation and disputes (docs/specification.md, "Checkout and orders"). */
export const ordersRoutes = (
  problems: Problems,
  orders: OrderOperations,
  identity: IdentityService,
  bodyLimitBytes: number,
): Router => {
  const router = Router();
  // Authentication is optional at the edge so that OrderOperations answers 401 and 403 the same way for REST
  // and the tools.
  const caller = authenticate(identity, { required: false });
  router
    .route('/api/orders')
    .get(caller, async (req, res) => {
      const query = parseOrThrow(orderListQuerySchema, req.query, 'query parameters');
      res.json(await orders.listMine(principalOf(req), query));
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/orders/:id/cancel')
    .post(caller, optionalJsonBody(bodyLimitBytes), async (req, res) => {
      const { id } = parseOrThrow(orderIdParamsSchema, req.params, 'order id');
      const body = parseOrThrow(cancelBodySchema, req.body ?? {}, 'cancellation');
      res.json(await orders.cancel(principalOf(req), 'buyer', Number(id), body.reason, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/orders/:id')
    .get(caller, async (req, res) => {
      const id = orderIdOfPath(req.params);
      res.json(await orders.buyerOrder(principalOf(req), id));
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/orders/:id/confirm')
    .post(caller, async (req, res) => {
      const id = orderIdOfPath(req.params);
      res.json(await orders.confirm(principalOf(req), id, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/orders/:id/dispute')
    .post(caller, ...jsonBody(bodyLimitBytes), async (req, res) => {
      const id = orderIdOfPath(req.params);
      const body = parseOrThrow(disputeBodySchema, req.body, 'dispute');
      res
        .status(201)
        .json(await orders.openDispute(principalOf(req), { order_id: id, ...body }, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

const buyerErrors = {
  401: 'No buyer API key or agent token',
  403: 'Not a buyer account',
  404: 'No such order of this buyer (another buyer’s order, or an id beyond 2^53 − 1, is not found either)',
} as const;

export const ordersRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/api/orders',
    operationId: 'listMyOrders',
    summary: 'The buyer’s own orders, newest first (list_my_orders over REST)',
    description:
      'Optionally one status only; pages of `limit` (1-100, default 20): pass `next_cursor` as `cursor` for the ' +
      'next page. Another account’s orders never appear.',
    tags: ['orders'],
    auth: 'api_key_or_agent_token',
    query: orderListQuerySchema,
    responses: {
      200: { description: 'A page of orders', schema: orderPageSchema },
      400: 'Invalid status, limit or cursor',
      401: buyerErrors[401],
      403: buyerErrors[403],
    },
  },
  {
    method: 'post',
    path: '/api/orders/{id}/cancel',
    operationId: 'cancelOrder',
    summary: 'Cancel an order awaiting shipment (cancel_order over REST)',
    description:
      'The order becomes cancelled, its units go back into stock and both parties are emailed. The body ' +
      '(`{reason}`) is optional. Cancelling a cancelled order answers it unchanged.',
    tags: ['orders'],
    auth: 'api_key_or_agent_token',
    pathParameters: orderIdParamsSchema,
    body: cancelBodySchema,
    responses: {
      200: { description: 'The cancelled order', schema: orderViewSchema },
      400: 'Invalid order id, or a reason over 1000 characters',
      ...buyerErrors,
      409: 'The order was shipped already (or is past shipment)',
    },
  },
  {
    method: 'get',
    path: '/api/orders/{id}',
    operationId: 'getOrder',
    summary: 'One of the buyer’s orders',
    description: 'Status, tracking and inspection deadline (get_order_status over REST).',
    tags: ['orders'],
    auth: 'api_key_or_agent_token',
    pathParameters: orderIdParamsSchema,
    responses: {
      200: { description: 'The order', schema: orderViewSchema },
      400: INVALID_ORDER_ID,
      ...buyerErrors,
    },
  },
  {
    method: 'post',
    path: '/api/orders/{id}/confirm',
    operationId: 'confirmOrder',
    summary: 'Confirm a delivered order before its inspection deadline',
    tags: ['orders'],
    auth: 'api_key_or_agent_token',
    pathParameters: orderIdParamsSchema,
    responses: {
      200: { description: 'The completed order', schema: orderViewSchema },
      400: INVALID_ORDER_ID,
      ...buyerErrors,
      409: 'The order is not delivered',
    },
  },
  {
    method: 'post',
    path: '/api/orders/{id}/dispute',
    operationId: 'openDispute',
    summary: 'Report a problem with a delivered order (open_dispute over REST)',
    description:
      'Within the 48 h inspection window; the order moves to issue_reported and the operator is emailed.',
    tags: ['orders'],
    auth: 'api_key_or_agent_token',
    pathParameters: orderIdParamsSchema,
    body: disputeBodySchema,
    responses: {
      201: { description: 'The disputed order', schema: orderViewSchema },
      400: 'Invalid order id or dispute',
      ...buyerErrors,
      409: 'The order is not delivered, or its inspection window closed',
    },
  },
];
