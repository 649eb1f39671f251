import { Router } from 'express';
import { z } from 'zod';
import { conflict, notFound } from '@marketplace/platform';
import type { IdentityService } from '../../application/identity.service.js';
import type { OrderOperations } from '../../application/order.operations.js';
import { authenticateApiKey, principalOf } from '../auth.middleware.js';
import { jsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import type { Problems } from '../problem.js';
import { requestIdOf } from '../request-log.js';
import {
  INVALID_ORDER_ID,
  orderIdParamsSchema,
  orderViewSchema,
  trackingBodySchema,
} from '../schemas/order.schema.js';
import { parseOrThrow } from '../schemas/validate.js';
import { orderIdOfPath } from '../path-ids.js';
import type { RouteDoc } from './openapi.describe.js';

/** The seller's fulfilment of one order (the bulk tools cover many). */
export const sellerOrdersRoutes = (
  problems: Problems,
  orders: OrderOperations,
  identity: IdentityService,
  bodyLimitBytes: number,
): Router => {
  const router = Router();
  const seller = authenticateApiKey(identity, { required: true });
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
