import { Router } from 'express';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { idempotencyKeyOf } from '../../edge/http/idempotency-key.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import { quoteRequestIdOfPath, quoteRequestIdParamsSchema } from '../../edge/http/path-ids.js';
import type { Problems } from '../../edge/http/problem.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import { quickBuyOutput } from './order.tools.js';
import { acceptQuoteAndPayInput } from './quote-purchase.tools.js';
import type { QuotePurchases } from './quote-purchases.js';

/** A quantity and a country: as small as a claim of a quote. */
const PURCHASE_BODY_LIMIT_BYTES = 1024;

/** `POST /api/ucp/quotes/{id}/accept-and-pay`: the buyer's agreed quote becomes an order (quote-purchases.ts). */
export const quotePurchaseRoutes = (
  problems: Problems,
  purchases: QuotePurchases,
  identity: IdentityService,
): Router => {
  const router = Router();
  router
    .route('/api/ucp/quotes/:id/accept-and-pay')
    .post(
      authenticate(identity, { required: true }),
      ...jsonBody(PURCHASE_BODY_LIMIT_BYTES),
      async (req, res) => {
        const id = quoteRequestIdOfPath(req.params);
        const body = parseOrThrow(acceptAndPayBodySchema, req.body, 'purchase');
        const bought = await purchases.acceptAndPay(
          principalOf(req),
          { ...body, quote_request_id: id, idempotency_key: idempotencyKeyOf(req, res) },
          requestIdOf(req),
        );
        res.setHeader('cache-control', 'no-store');
        res.status(201).json(bought);
      },
    )
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

/** The body of accept-and-pay: the tool's arguments but the id (in the path) and the key (a header). */
const acceptAndPayBodySchema = acceptQuoteAndPayInput.omit({ quote_request_id: true, idempotency_key: true });

export const quotePurchaseRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/api/ucp/quotes/{id}/accept-and-pay',
    operationId: 'acceptQuoteAndPay',
    summary: 'Buy your agreed quote at once, at its price',
    description:
      'Turns the caller’s accepted or countered quote into an order on invoice terms (net 30): the quoted quantity ' +
      'unless the body names fewer, shipped to shipping_country. No instant checkout is needed: the seller agreed. ' +
      'The price is used once and expires (offer_expires_at); an anonymous request is claimed first. With an ' +
      'Idempotency-Key, a repeat answers the same order. The twin of accept_quote_and_pay.',
    tags: ['quotes'],
    auth: 'api_key_or_agent_token',
    idempotencyKey: true,
    pathParameters: quoteRequestIdParamsSchema,
    body: acceptAndPayBodySchema,
    responses: {
      201: { description: 'The order placed', schema: quickBuyOutput },
      400: 'Invalid body, an id that is not a quote request id, or a quote with no agreed price or an expired one',
      401: 'No buyer credential',
      403: 'Not a buyer account',
      404: 'No such quote request of the caller (an id beyond 2^53 − 1 names none)',
      409: 'The quote was already used, or the stock ran out',
      413: `The body is larger than ${PURCHASE_BODY_LIMIT_BYTES} bytes`,
    },
  },
];
