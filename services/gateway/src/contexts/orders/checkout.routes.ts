import { Router } from 'express';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import type { OrderOperations } from './order.operations.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { idempotencyKeyOf } from '../../edge/http/idempotency-key.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import { checkoutBodySchema, checkoutIdParamsSchema, checkoutSessionSchema } from './checkout.schema.js';
import { completedCheckoutSchema } from './order.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/** createCheckout and its completion (docs/specification.md, "Catalog endpoints"; docs/specification.md, "Checkout and orders"). */
export const checkoutRoutes = (
  problems: Problems,
  orders: OrderOperations,
  identity: IdentityService,
  bodyLimitBytes: number,
): Router => {
  const router = Router();
  router
    .route('/api/ucp/checkout')
    .post(authenticate(identity, { required: false }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const idempotencyKey = idempotencyKeyOf(req, res);
      const body = parseOrThrow(checkoutBodySchema, req.body, 'checkout');
      res
        .status(201)
        .json(await orders.createCheckout(principalOf(req), body, requestIdOf(req), idempotencyKey));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/ucp/checkout/:id/complete')
    .post(authenticate(identity, { required: false }), async (req, res) => {
      const { id } = parseOrThrow(checkoutIdParamsSchema, req.params, 'checkout session id');
      res.json(await orders.completeCheckout(principalOf(req), id, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

export const checkoutRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/api/ucp/checkout',
    operationId: 'createCheckout',
    summary: 'Price a checkout session',
    description:
      'Prices each line at the listing price (or an accepted quote’s agreed price). status is ready_for_complete, or ' +
      'requires_escalation when a product is over the bulk threshold (more than 100 units or $5,000 of one ' +
      'product in one checkout, its unquoted lines added up) or above stock, with messages saying to use ' +
      'request_quote. A quote’s agreed price is used once: by one line of one checkout, whose order redeems it. Anonymous callers may price; a buyer key or agent token binds ' +
      'the session to the buyer. Sessions expire (expires_at). With an Idempotency-Key (scoped by the buyer ' +
      'account, else the buyer email, else shared by anonymous callers: use a random key), a repeat of the same ' +
      'body answers the session the key created, as it is now.',
    tags: ['checkout'],
    auth: 'api_key_or_agent_token_optional',
    idempotencyKey: true,
    body: checkoutBodySchema,
    responses: {
      201: { description: 'The checkout session', schema: checkoutSessionSchema },
      400: 'Invalid lines (unknown product, below the minimum order quantity, a quote that is not the buyer’s or is on two lines)',
      401: 'A credential was sent but is not valid',
      403: 'A seller key: sellers do not buy',
      409: 'A quote of a line was already used by an order, or another checkout is completing with it',
    },
  },
  {
    method: 'post',
    path: '/api/ucp/checkout/{id}/complete',
    operationId: 'completeCheckout',
    summary: 'Place the orders of a checkout session',
    description:
      'Reserves the stock of every line and places one order per line on invoice terms (net 30). Idempotent: ' +
      'completing a completed session answers its orders. Needs the buyer’s key or agent token.',
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    pathParameters: checkoutIdParamsSchema,
    responses: {
      200: { description: 'The completed session and its orders', schema: completedCheckoutSchema },
      400: 'The session id is not a checkout session id',
      401: 'No buyer credential',
      403: 'Not a buyer account',
      404: 'No such session (or another buyer’s)',
      409:
        'The session needs a quote, expired, the stock ran out (the reservations were released), or another ' +
        'checkout used one of its quotes first',
    },
  },
];
