import { Router } from 'express';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import type { SellerWebhooks } from './seller-webhooks.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import {
  registeredSellerWebhookSchema,
  registerSellerWebhookBodySchema,
  sellerWebhookIdParamsSchema,
  sellerWebhookListSchema,
} from './seller-webhook.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/** A seller's webhook endpoints for order.placed, quote.requested and order.disputed. */
export const sellerWebhooksRoutes = (
  problems: Problems,
  webhooks: SellerWebhooks,
  identity: IdentityService,
  bodyLimitBytes: number,
): Router => {
  const router = Router();
  const caller = authenticate(identity, { required: true });
  router
    .route('/api/seller/webhooks')
    .post(caller, ...jsonBody(bodyLimitBytes), async (req, res) => {
      const { url } = parseOrThrow(registerSellerWebhookBodySchema, req.body, 'webhook');
      // The answer carries the only copy of the secret: no cache may keep it.
      res
        .status(201)
        .set('Cache-Control', 'no-store')
        .json(await webhooks.register(principalOf(req), url));
    })
    .get(caller, async (req, res) => {
      res.json(await webhooks.list(principalOf(req)));
    })
    .all(methodNotAllowed(problems, ['GET', 'POST']));
  router
    .route('/api/seller/webhooks/:id')
    .delete(caller, async (req, res) => {
      const { id } = parseOrThrow(sellerWebhookIdParamsSchema, req.params, 'webhook id');
      await webhooks.remove(principalOf(req), id);
      res.status(204).end();
    })
    .all(methodNotAllowed(problems, ['DELETE']));
  return router;
};

const sellerErrors = { 401: 'Missing or invalid X-MCP-API-Key', 403: 'Not a seller account' } as const;

export const sellerWebhooksRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/api/seller/webhooks',
    operationId: 'registerSellerWebhook',
    summary: 'Register an endpoint for order.placed, quote.requested and order.disputed webhooks',
    description:
      'Each delivery is a POST of `{id, type, created_at, data}` with `X-Marketplace-Event`, ' +
      '`X-Marketplace-Delivery` (stable across retries) and `X-Marketplace-Signature: t=<unix seconds>,v1=<hex ' +
      'HMAC-SHA256 of "<t>.<raw body>">` under this endpoint’s own secret, answered here once. Retried after 1 s, ' +
      '2 s and 4 s on 5xx, 429 and network errors. At most 5 endpoints per seller.',
    tags: ['seller webhooks'],
    auth: 'api_key',
    body: registerSellerWebhookBodySchema,
    responses: {
      201: { description: 'The endpoint and its secret (shown once)', schema: registeredSellerWebhookSchema },
      400: 'The url is not an absolute public http(s) URL',
      ...sellerErrors,
      409: 'The seller has 5 endpoints already',
    },
  },
  {
    method: 'get',
    path: '/api/seller/webhooks',
    operationId: 'listSellerWebhooks',
    summary: 'The seller’s webhook endpoints, each with its recent deliveries',
    tags: ['seller webhooks'],
    auth: 'api_key',
    responses: { 200: { description: 'The endpoints', schema: sellerWebhookListSchema }, ...sellerErrors },
  },
  {
    method: 'delete',
    path: '/api/seller/webhooks/{id}',
    operationId: 'deleteSellerWebhook',
    summary: 'Delete one of the seller’s webhook endpoints',
    tags: ['seller webhooks'],
    auth: 'api_key',
    pathParameters: sellerWebhookIdParamsSchema,
    responses: {
      204: { description: 'Deleted: nothing more is sent to it' },
      ...sellerErrors,
      404: 'No such endpoint of this seller (another seller’s is not found either)',
    },
  },
];
