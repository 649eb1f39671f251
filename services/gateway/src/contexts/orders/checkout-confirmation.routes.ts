import { Router } from 'express';
import type { CheckoutConfirmations } from './checkout-confirmations.js';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import {
  confirmPurchaseInput,
  previewCheckoutInput,
  previewCheckoutOutput,
} from './checkout-confirmation.tools.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import { completedCheckoutSchema } from './order.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/** The REST twins of preview_checkout and confirm_purchase (docs/specification.md, "Preview and confirm"). */
export const checkoutConfirmationRoutes = (
  problems: Problems,
  confirmations: CheckoutConfirmations,
  identity: IdentityService,
  bodyLimitBytes: number,
): Router => {
  const router = Router();
  router
    .route('/api/ucp/checkout/preview')
    .post(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const body = parseOrThrow(previewCheckoutInput, req.body, 'preview');
      res.setHeader('cache-control', 'no-store');
      res.json(await confirmations.preview(principalOf(req), body, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/ucp/checkout/confirm')
    .post(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const body = parseOrThrow(confirmPurchaseInput, req.body, 'confirmation');
      res.setHeader('cache-control', 'no-store');
      res
        .status(201)
        .json(await confirmations.confirm(principalOf(req), body.confirmation_token, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

export const checkoutConfirmationRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/api/ucp/checkout/preview',
    operationId: 'previewCheckout',
    summary: 'Price a purchase without buying, with a confirmation token',
    description:
      'Each line with its unit price (listed, or a quote’s agreed price with quote_request_id), the totals, and ' +
      'what would escalate to a quote and why. When nothing escalates, confirmation_token (valid 5 minutes) is ' +
      'bound to the caller’s account and to exactly this content. The twin of preview_checkout.',
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    body: previewCheckoutInput,
    responses: {
      200: { description: 'The itemised preview', schema: previewCheckoutOutput },
      400: 'Invalid lines (each named), a quote that is not the caller’s or has no agreed price',
      401: 'No buyer credential',
      403: 'Not a buyer account',
      409: 'A quote of a line was already used by an order',
    },
  },
  {
    method: 'post',
    path: '/api/ucp/checkout/confirm',
    operationId: 'confirmPurchase',
    summary: 'Place exactly the previewed order',
    description:
      'Prices the previewed lines again and places the orders only if price, stock and offers are as previewed. ' +
      'A token is used once. The twin of confirm_purchase.',
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    body: confirmPurchaseInput,
    responses: {
      201: { description: 'The completed checkout and its orders', schema: completedCheckoutSchema },
      400: 'confirmation_token is missing, malformed, forged or altered',
      401: 'No buyer credential',
      403: 'Not a buyer account, or the token was issued to another account',
      409: 'Something changed since the preview (named), the token expired, or it was already used',
    },
  },
];
