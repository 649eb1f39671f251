import { Router } from 'express';
import { z } from 'zod';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import type { QuoteRequests } from './quote.requests.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { idempotencyKeyOf } from '../../edge/http/idempotency-key.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import type { RateLimiter } from '../../edge/http/rate-limit.js';
import { clientAddressOfRequest, rateLimit } from '../../edge/http/rate-limit.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import type { QuoteRequestBody } from './quote-request.schema.js';
import {
  buyerQuoteListQuerySchema,
  buyerQuoteRequestListSchema,
  buyerQuoteRequestSchema,
  CLAIM_TOKEN_HEADER,
  claimQuoteBodySchema,
  claimTokenSchema,
  answerOf,
  quoteAnswerBodySchema,
  quoteRequestBodySchema,
  quoteRequestIdParamsSchema,
  sellerQuoteListQuerySchema,
  submittedQuoteRequestSchema,
} from './quote-request.schema.js';
import { quoteRequestListOutput, sellerQuoteRequestOutput } from './quote.tools.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import { quoteRequestIdOfPath } from '../../edge/http/path-ids.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/** A quote request with a 2,000-character message, every character escaped, fits several times over. */
const QUOTE_BODY_LIMIT_BYTES = 32 * 1024;

/**
 * `POST /api/ucp/quotes` (docs/specification.md, "Catalog endpoints", docs/specification.md, "Quotes"): anonymous, or with an API key or agent token that binds
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
        res.setHeader('cache-control', 'no-store');
        const submitted = await quotes.request(
          principalOf(req),
          {
            productId: body.product_id,
            quantity: body.quantity,
            buyer: body.buyer,
            targetPriceCents: body.target_price,
            message: body.message,
            shippingDestination: body.shipping_destination,
            idempotencyKey: idempotencyKeyOf(req, res),
          },
          requestIdOf(req),
        );
        res.status(201).json(submitted);
      },
    )
    .get(authenticate(identity, { required: true }), async (req, res) => {
      const query = parseOrThrow(buyerQuoteListQuerySchema, req.query, 'query parameters');
      res.setHeader('cache-control', 'no-store');
      res.json(await quotes.listMine(principalOf(req), query));
    })
    .all(methodNotAllowed(problems, ['GET', 'POST']));
  router
    .route('/api/ucp/quotes/:id')
    .get(authenticate(identity, { required: false }), async (req, res) => {
      const id = quoteRequestIdOfPath(req.params);
      const presented = req.headers[CLAIM_TOKEN_HEADER];
      const claimToken =
        presented === undefined
          ? undefined
          : parseOrThrow(z.object({ [CLAIM_TOKEN_HEADER]: claimTokenSchema }), req.headers, 'claim token')[
              CLAIM_TOKEN_HEADER
            ];
      res.setHeader('cache-control', 'no-store');
      res.json(await quotes.status(principalOf(req), { quoteRequestId: id, claimToken }));
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/ucp/quotes/:id/claim')
    .post(
      authenticate(identity, { required: true }),
      ...jsonBody(CLAIM_BODY_LIMIT_BYTES),
      async (req, res) => {
        const id = quoteRequestIdOfPath(req.params);
        const body = parseOrThrow(claimQuoteBodySchema, req.body, 'claim');
        res.json(
          await quotes.claim(
            principalOf(req),
            { quoteRequestId: id, claimToken: body.claim_token },
            requestIdOf(req),
          ),
        );
      },
    )
    .all(methodNotAllowed(problems, ['POST']));
  // An answer in a negotiation: the buyer's (to a seller counter-offer) or the seller's (docs/specification.md).
  const answerRoute = (path: string, answer: 'respondToCounterOffer' | 'respond') =>
    router
      .route(path)
      .post(
        authenticate(identity, { required: true }),
        ...jsonBody(ANSWER_BODY_LIMIT_BYTES),
        async (req, res) => {
          const id = quoteRequestIdOfPath(req.params);
          const body = parseOrThrow(quoteAnswerBodySchema, req.body, 'answer');
          res.setHeader('cache-control', 'no-store');
          res.json(
            await quotes[answer](
              principalOf(req),
              { quoteRequestId: id, ...answerOf(body) },
              requestIdOf(req),
            ),
          );
        },
      )
      .all(methodNotAllowed(problems, ['POST']));
  answerRoute('/api/ucp/quotes/:id/respond', 'respondToCounterOffer');
  // The seller's quote inbox: the REST twins of get_quote_requests and respond_to_quote.
  router
    .route('/api/seller/quotes')
    .get(authenticate(identity, { required: true }), async (req, res) => {
      const query = parseOrThrow(sellerQuoteListQuerySchema, req.query, 'query parameters');
      res.setHeader('cache-control', 'no-store');
      res.json(await quotes.list(principalOf(req), query.status, query.limit));
    })
    .all(methodNotAllowed(problems, ['GET']));
  answerRoute('/api/seller/quotes/:id/respond', 'respond');
  return router;
};

const CLAIM_BODY_LIMIT_BYTES = 1024;
/** An answer with a 2,000-character message, every character escaped. */
const ANSWER_BODY_LIMIT_BYTES = 16 * 1024;

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
  {
    method: 'get',
    path: '/api/ucp/quotes',
    operationId: 'listMyQuotes',
    summary: 'Your quote requests, newest first',
    description:
      'The calling account’s own quote requests: asked with its API key or agent token, or claimed. Each says the ' +
      'seller’s answer, the agreed unit price, until when it can be bought, and how to buy. status: pending, ' +
      'responded or all (default); limit 1-200 (default 50); offset for the next page. The twin of list_my_quotes.',
    tags: ['quotes'],
    auth: 'api_key_or_agent_token',
    query: buyerQuoteListQuerySchema,
    responses: {
      200: { description: 'One page of the requests and the total', schema: buyerQuoteRequestListSchema },
      400: 'A query parameter is invalid (each one named)',
      401: 'No credential',
    },
  },
  {
    method: 'get',
    path: '/api/ucp/quotes/{id}',
    operationId: 'getQuoteStatus',
    summary: 'One of your quote requests: status, the seller’s answer, the agreed price and how to buy',
    description:
      'The caller’s own request (API key or agent token), or an unclaimed anonymous one with its claim token in ' +
      'the X-Quote-Claim-Token header. Anything else is 404, like an unknown id. The twin of get_quote_status.',
    tags: ['quotes'],
    auth: 'api_key_or_agent_token_optional',
    pathParameters: quoteRequestIdParamsSchema,
    responses: {
      200: { description: 'The request as its buyer sees it', schema: buyerQuoteRequestSchema },
      400: 'The id is not a quote request id, or the claim token is malformed',
      401: 'Neither a credential nor a claim token',
      404: 'No such quote request of the caller (an id beyond 2^53 − 1 names none)',
    },
  },
  {
    method: 'post',
    path: '/api/ucp/quotes/{id}/claim',
    operationId: 'claimQuote',
    summary: 'Claim an anonymous quote request for your buyer account',
    description:
      'An anonymous request belongs to whoever holds its claim_token (in its 201 answer and in the buyer email of ' +
      'the seller’s answer); an email address typed into a request proves nothing. The buyer account claims it ' +
      'here, then checks it out with quote_request_id like a request it made itself. Claiming one’s own request ' +
      'again answers it unchanged.',
    tags: ['quotes'],
    auth: 'api_key_or_agent_token',
    pathParameters: quoteRequestIdParamsSchema,
    body: claimQuoteBodySchema,
    responses: {
      200: { description: 'The request, now the caller’s', schema: buyerQuoteRequestSchema },
      400: 'The id is not a quote request id, or the body has no claim_token',
      401: 'No buyer credential',
      403: 'Not a buyer account',
      404: 'No such quote request (an id beyond 2^53 − 1 names none), or the token is not its own',
      409: 'Another buyer account owns the request',
      413: `The body is larger than ${CLAIM_BODY_LIMIT_BYTES} bytes`,
    },
  },
  {
    method: 'post',
    path: '/api/ucp/quotes/{id}/respond',
    operationId: 'respondToCounterOffer',
    summary: 'Answer the seller’s counter-offer: accept, counter or decline',
    description:
      'The caller’s own request whose negotiation_state is awaiting_buyer. accept agrees the seller’s price (buyable ' +
      'for 7 days); counter with counter_price (cents per unit) hands the turn back to the seller, the offer open ' +
      '7 days, nothing buyable meanwhile; decline ends the negotiation. The seller is emailed; the answer carries ' +
      'the whole history. The twin of respond_to_counter_offer.',
    tags: ['quotes'],
    auth: 'api_key_or_agent_token',
    pathParameters: quoteRequestIdParamsSchema,
    body: quoteAnswerBodySchema,
    responses: {
      200: { description: 'The request after the answer', schema: buyerQuoteRequestSchema },
      400: 'Invalid body (action, counter_price or message named), or an id that is not a quote request id',
      401: 'No buyer credential',
      403: 'Not a buyer account',
      404: 'No such quote request of the caller (another account’s is not found either)',
      409: 'Not the buyer’s turn (no open seller counter-offer, already answered), or the offer expired',
      413: `The body is larger than ${ANSWER_BODY_LIMIT_BYTES / 1024} KiB`,
    },
  },
  {
    method: 'get',
    path: '/api/seller/quotes',
    operationId: 'listSellerQuotes',
    summary: 'The seller’s quote inbox, newest first',
    description:
      'The calling seller’s quote requests: status pending (default: the seller’s turn, including buyer ' +
      'counter-offers), responded or all; limit 1-200 (default 50). Each carries the negotiation state, the open ' +
      'offer’s expiry and the history of both sides. The twin of get_quote_requests.',
    tags: ['seller quotes'],
    auth: 'api_key',
    query: sellerQuoteListQuerySchema,
    responses: {
      200: { description: 'The requests and how many match', schema: quoteRequestListOutput },
      400: 'A query parameter is invalid (each one named)',
      401: 'No API key',
      403: 'Not a seller account',
    },
  },
  {
    method: 'post',
    path: '/api/seller/quotes/{id}/respond',
    operationId: 'respondToQuoteRequest',
    summary: 'Answer a quote request or the buyer’s counter-offer: accept, counter or decline',
    description:
      'Only on the seller’s turn (status pending). accept agrees the buyer’s counter price, else the target price, ' +
      'else the listed price; counter with counter_price (cents per unit) opens an offer for 7 days; decline ends ' +
      'the negotiation. The buyer is emailed. The twin of respond_to_quote.',
    tags: ['seller quotes'],
    auth: 'api_key',
    pathParameters: quoteRequestIdParamsSchema,
    body: quoteAnswerBodySchema,
    responses: {
      200: { description: 'The request after the answer', schema: sellerQuoteRequestOutput },
      400: 'Invalid body (action, counter_price or message named), or an id that is not a quote request id',
      401: 'No API key',
      403: 'Not a seller account',
      404: 'No such quote request of this seller (another seller’s is not found either)',
      409: 'Not the seller’s turn (already answered), or the buyer’s counter-offer expired',
      413: `The body is larger than ${ANSWER_BODY_LIMIT_BYTES / 1024} KiB`,
    },
  },
];
