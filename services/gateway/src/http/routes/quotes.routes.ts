import { Router } from 'express';
import type { IdentityService } from '../../application/identity.service.js';
import type { QuoteRequests } from '../../application/quote.requests.js';
import { authenticate, principalOf } from '../auth.middleware.js';
import { idempotencyKeyOf } from '../idempotency-key.js';
import { jsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import type { Problems } from '../problem.js';
import type { RateLimiter } from '../rate-limit.js';
import { clientAddressOfRequest, rateLimit } from '../rate-limit.js';
import { requestIdOf } from '../request-log.js';
import type { QuoteRequestBody } from '../schemas/quote-request.schema.js';
import { quoteRequestBodySchema, submittedQuoteRequestSchema } from '../schemas/quote-request.schema.js';
import { parseOrThrow } from '../schemas/validate.js';
import type { RouteDoc } from './openapi.describe.js';

/** A quote request with a 2,000-character message, every character escaped, fits several times over. */
const QUOTE_BODY_LIMIT_BYTES = 32 * 1024;

/**
 * `POST /api/ucp/quotes` (spec 4.1, decisions "Quotes"): anonymous, or with an API key or agent token that binds
 * the request to the buyer's account. The rate limit runs after authentication (a verified caller has its own,
 * larger allowance) and after parsing (anonymous requests count per buyer email too), so an invalid request
 * costs no allowance.
 */
export const quotesRoutes = (
  problems: Problems,
  quotes: QuoteRequests,
  identity: IdentityService,
  limiter: RateLimiter,
): Router => {
  const router = Router();
  router
    .route('/api/ucp/quotes')
    .post(
      authenticate(identity, { required: false }),
      ...jsonBody(QUOTE_BODY_LIMIT_BYTES),
      (req, res, next) => {
        // Checked with the body, before the rate limit: a malformed key costs no allowance either.
        idempotencyKeyOf(req, res);
        req.body = parseOrThrow(quoteRequestBodySchema, req.body, 'quote request');
        next();
      },
      rateLimit(limiter, (req) =>
        limiter.quoteChecks(
          principalOf(req),
          clientAddressOfRequest(req),
          (req.body as QuoteRequestBody).buyer.email,
        ),
      ),
      async (req, res) => {
        const body = req.body as QuoteRequestBody;
        const submitted = await quotes.request(
          principalOf(req),
          {
            productId: body.product_id,
            quantity: body.quantity,
            buyer: body.buyer,
            targetPriceCents: body.target_price,
            message: body.message,
            idempotencyKey: idempotencyKeyOf(req, res),
          },
          requestIdOf(req),
        );
        res.status(201).json(submitted);
      },
    )
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

export const quotesRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/api/ucp/quotes',
    operationId: 'requestQuote',
    summary: 'Ask the seller of a product for a bulk quote',
    description:
      'Anonymous allowed. The quantity may exceed the listed stock (exceeds_available_stock says so). The seller ' +
      'is emailed and expected to answer within 24-48 hours. X-MCP-API-Key or X-Agent-Token binds the request to ' +
      'the buyer account and raises the rate limit (anonymous: 10 per hour per client IP and per buyer email; ' +
      'with a key: 100 per hour per key). Limited answers carry RateLimit-Limit, RateLimit-Remaining, ' +
      'RateLimit-Reset and RateLimit-Policy; a 429 carries Retry-After. With an Idempotency-Key (scoped by the ' +
      'buyer account, else by the buyer email), a repeat of the same body answers the request the key filed.',
    tags: ['quotes'],
    auth: 'api_key_or_agent_token_optional',
    rateLimited: true,
    idempotencyKey: true,
    body: quoteRequestBodySchema,
    responses: {
      201: { description: 'The quote request was submitted', schema: submittedQuoteRequestSchema },
      400: 'Invalid request (each offending field in errors)',
      413: `The body is larger than ${QUOTE_BODY_LIMIT_BYTES / 1024} KiB`,
      401: 'A credential was sent but is not valid',
      404: 'No such product, or it is not publicly listed',
    },
  },
];
