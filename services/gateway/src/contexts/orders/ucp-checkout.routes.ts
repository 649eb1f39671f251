import { Router } from 'express';
import { z } from 'zod';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { idempotencyKeyOf } from '../../edge/http/idempotency-key.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import { UCP_SHOPPING_PATH } from '../../edge/ucp.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { checkoutIdParamsSchema } from './checkout.schema.js';
import type { OrderOperations } from './order.operations.js';
import { checkoutBodyOfUcp, ucpCheckoutCreateSchema, ucpCheckoutView } from './ucp-checkout.js';

/** The REST binding's paths under the UCP shopping service's endpoint (docs/protocols.md §2.3, "REST"). */
export const UCP_CHECKOUT_PATH = `${UCP_SHOPPING_PATH}/checkout-sessions`;

/**
 * UCP's checkout (docs/protocols.md §2.3) over the same OrderOperations as our own /api/ucp/checkout, so the two
 * answer one session alike; only the shapes differ.
 */
export const ucpCheckoutRoutes = (
  problems: Problems,
  orders: OrderOperations,
  identity: IdentityService,
  bodyLimitBytes: number,
  publicBaseUrl: string,
): Router => {
  const router = Router();
  router
    .route(UCP_CHECKOUT_PATH)
    .post(authenticate(identity, { required: false }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const idempotencyKey = idempotencyKeyOf(req, res);
      const request = parseOrThrow(ucpCheckoutCreateSchema, req.body, 'checkout');
      const session = await orders.createCheckout(
        principalOf(req),
        checkoutBodyOfUcp(request),
        requestIdOf(req),
        idempotencyKey,
      );
      res.status(201).json(ucpCheckoutView(publicBaseUrl, session));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route(`${UCP_CHECKOUT_PATH}/:id`)
    .get(authenticate(identity, { required: false }), async (req, res) => {
      const { id } = parseOrThrow(checkoutIdParamsSchema, req.params, 'checkout session id');
      const { checkout, orders: placed } = await orders.getCheckout(principalOf(req), id);
      res.json(ucpCheckoutView(publicBaseUrl, checkout, placed));
    })
    // UCP's update replaces what the platform sends (lines, buyer, context); the session is priced again.
    .put(authenticate(identity, { required: false }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const idempotencyKey = idempotencyKeyOf(req, res);
      const { id } = parseOrThrow(checkoutIdParamsSchema, req.params, 'checkout session id');
      const request = parseOrThrow(ucpCheckoutCreateSchema, req.body, 'checkout');
      const session = await orders.updateCheckout(
        principalOf(req),
        id,
        checkoutBodyOfUcp(request),
        requestIdOf(req),
        idempotencyKey,
      );
      res.json(ucpCheckoutView(publicBaseUrl, session));
    })
    .all(methodNotAllowed(problems, ['GET', 'PUT']));
  router
    .route(`${UCP_CHECKOUT_PATH}/:id/cancel`)
    .post(
      authenticate(identity, { required: false }),
      ...jsonBody(bodyLimitBytes, { optional: true }),
      async (req, res) => {
        const idempotencyKey = idempotencyKeyOf(req, res);
        const { id } = parseOrThrow(checkoutIdParamsSchema, req.params, 'checkout session id');
        const session = await orders.cancelCheckout(principalOf(req), id, requestIdOf(req), idempotencyKey);
        res.json(ucpCheckoutView(publicBaseUrl, session));
      },
    )
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route(`${UCP_CHECKOUT_PATH}/:id/complete`)
    // UCP's `payment` member is not read: the one payment method is invoice terms, net 30, decided by the
    // order service (services/order/README.md, "Not done").
    .post(
      authenticate(identity, { required: false }),
      ...jsonBody(bodyLimitBytes, { optional: true }),
      async (req, res) => {
        const { id } = parseOrThrow(checkoutIdParamsSchema, req.params, 'checkout session id');
        const { checkout, orders: placed } = await orders.completeCheckout(
          principalOf(req),
          id,
          requestIdOf(req),
        );
        res.json(ucpCheckoutView(publicBaseUrl, checkout, placed));
      },
    )
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

const ucpCheckoutDocSchema = z
  .looseObject({ ucp: z.looseObject({}), id: z.string(), status: z.string() })
  .describe('A UCP checkout object (UCP 2026-04-08, dev.ucp.shopping.checkout)');

export const ucpCheckoutRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: UCP_CHECKOUT_PATH,
    operationId: 'createUcpCheckout',
    summary: 'Create a UCP checkout session',
    description:
      'UCP 2026-04-08 checkout (dev.ucp.shopping.checkout) over the same sessions as createCheckout: line_items[].item.id ' +
      'is a product id; context.address_country is the shipping country. status is ready_for_complete, or ' +
      'requires_escalation with a continue_url and messages saying to request a quote. Totals: subtotal (goods), ' +
      'fulfillment (freight), total, in cents.',
    tags: ['checkout'],
    auth: 'api_key_or_agent_token_optional',
    idempotencyKey: true,
    body: ucpCheckoutCreateSchema,
    responses: {
      201: { description: 'The UCP checkout', schema: ucpCheckoutDocSchema },
      400: 'Invalid lines (unknown product, below the minimum order quantity), naming the field',
      401: 'A credential was sent but is not valid',
      403: 'A seller key: sellers do not buy',
    },
  },
  {
    method: 'get',
    path: `${UCP_CHECKOUT_PATH}/{id}`,
    operationId: 'getUcpCheckout',
    summary: 'Get a UCP checkout session',
    description:
      'The buyer’s own session as it is now, with its order once completed. A session priced anonymously is ' +
      'read by the buyer who completed it, once completed.',
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    pathParameters: checkoutIdParamsSchema,
    responses: {
      200: { description: 'The UCP checkout', schema: ucpCheckoutDocSchema },
      400: 'The session id is not a checkout session id',
      401: 'No buyer credential',
      403: 'Not a buyer account',
      404: 'No such session (or another buyer’s)',
    },
  },
  {
    method: 'put',
    path: `${UCP_CHECKOUT_PATH}/{id}`,
    operationId: 'updateUcpCheckout',
    summary: 'Update a UCP checkout session',
    description:
      'Replaces the lines, buyer and context of the buyer’s open session and prices it again by the rules of ' +
      'create (status, messages, totals, a new expires_at). Needs the buyer’s key or agent token; an ' +
      'Idempotency-Key makes a repeat answer the session as it is now.',
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    idempotencyKey: true,
    pathParameters: checkoutIdParamsSchema,
    body: ucpCheckoutCreateSchema,
    responses: {
      200: { description: 'The UCP checkout', schema: ucpCheckoutDocSchema },
      400: 'Invalid lines (unknown product, below the minimum order quantity), naming the field',
      401: 'No buyer credential',
      403: 'Not a buyer account',
      404: 'No such session (or another buyer’s)',
      409: 'The session is completing, completed, canceled or expired',
    },
  },
  {
    method: 'post',
    path: `${UCP_CHECKOUT_PATH}/{id}/cancel`,
    operationId: 'cancelUcpCheckout',
    summary: 'Cancel a UCP checkout session',
    description:
      'Cancels the buyer’s open session (status canceled); canceling a canceled session answers it. Needs the ' +
      'buyer’s key or agent token.',
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    idempotencyKey: true,
    pathParameters: checkoutIdParamsSchema,
    responses: {
      200: { description: 'The canceled UCP checkout', schema: ucpCheckoutDocSchema },
      400: 'The session id is not a checkout session id',
      401: 'No buyer credential',
      403: 'Not a buyer account',
      404: 'No such session (or another buyer’s)',
      409: 'The session is completing or completed',
    },
  },
  {
    method: 'post',
    path: `${UCP_CHECKOUT_PATH}/{id}/complete`,
    operationId: 'completeUcpCheckout',
    summary: 'Complete a UCP checkout session',
    description:
      'Places one order per line on invoice terms (net 30); `payment` is not read. Idempotent: completing a ' +
      'completed session answers it with its orders. Needs the buyer’s key or agent token.',
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    pathParameters: checkoutIdParamsSchema,
    responses: {
      200: { description: 'The completed UCP checkout', schema: ucpCheckoutDocSchema },
      400: 'The session id is not a checkout session id',
      401: 'No buyer credential',
      403: 'Not a buyer account',
      404: 'No such session (or another buyer’s)',
      409: 'The session needs a quote, expired, or the stock ran out',
    },
  },
];
