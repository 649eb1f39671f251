import { Router } from 'express';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { Logger } from '@marketplace/platform';
import { isAppError } from '@marketplace/platform';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import { authenticateBearer, principalOf } from '../../edge/http/auth.middleware.js';
import { errorHandler } from '../../edge/http/error-handler.js';
import { idempotencyKeyOf } from '../../edge/http/idempotency-key.js';
import { jsonBody } from '../../edge/http/json-body.js';
import type { Problems } from '../../edge/http/problem.js';
import { HttpProblem, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../edge/http/problem.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../edge/schemas/idempotency-key.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import type { Principal } from '../../edge/account.js';
import type { AcpError, QuotedLine } from './acp-checkout.js';
import {
  ACP_CHECKOUT_VERSION,
  ACP_SUPPORTED_VERSIONS,
  acpCancelSchema,
  acpCheckoutView,
  acpCompleteSchema,
  acpCreateSchema,
  acpErrorOfProblem,
  acpUpdateSchema,
  checkoutBodyOfAcp,
  checkoutChangesOfAcp,
} from './acp-checkout.js';
import { checkoutIdParamsSchema } from './checkout.schema.js';
import type { OrderOperations } from './order.operations.js';
import type { AgreedQuotes } from './quote-purchases.js';
import { validationError } from '@marketplace/platform';

/** ACP's `api_base_url` (/.well-known/acp.json) and the checkout's paths under it (docs/protocols.md §3.2). */
export const ACP_BASE_PATH = '/api/acp';
export const ACP_CHECKOUT_PATH = `${ACP_BASE_PATH}/checkout_sessions`;

const API_VERSION_HEADER = 'API-Version';
const REQUEST_ID_HEADER = 'Request-Id';

const sendAcpError = (res: Response, { status, body }: AcpError): void => {
  if (status === 503) res.set('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  if (status === 401) res.set('WWW-Authenticate', 'Bearer');
  res.status(status).json(body);
};

/**
 * ACP's request headers (docs/protocols.md §3.2): `API-Version` on every request (400 `missing_api_version` or
 * `unsupported_api_version`, with the versions we answer), `Request-Id` echoed when it is sent.
 */
const acpHeaders: RequestHandler = (req, res, next) => {
  if (req.method === 'OPTIONS') {
    next();
    return;
  }
  const requestId = req.get(REQUEST_ID_HEADER);
  if (requestId !== undefined && /^[!-~]{1,200}$/.test(requestId)) res.set(REQUEST_ID_HEADER, requestId);
  const version = req.get(API_VERSION_HEADER);
  if (version === undefined || version === '' || !ACP_SUPPORTED_VERSIONS.includes(version)) {
    const missing = version === undefined || version === '';
    sendAcpError(res, {
      status: 400,
      body: {
        type: 'invalid_request',
        code: missing ? 'missing_api_version' : 'unsupported_api_version',
        message: missing
          ? `the ${API_VERSION_HEADER} header is required, e.g. ${API_VERSION_HEADER}: ${ACP_CHECKOUT_VERSION}`
          : `${API_VERSION_HEADER} ${version.slice(0, 40)} is not supported; send one of ${ACP_SUPPORTED_VERSIONS.join(', ')}`,
        supported_versions: ACP_SUPPORTED_VERSIONS,
      },
    });
    return;
  }
  next();
};

/** ACP requires an Idempotency-Key on every POST: 400 `idempotency_key_required` without one. */
const requiredIdempotencyKey = (req: Request, res: Response): string => {
  const key = idempotencyKeyOf(req, res);
  if (key === undefined) {
    throw Object.assign(
      validationError(`the ${IDEMPOTENCY_KEY_HEADER} header is required on every POST`, [
        { path: IDEMPOTENCY_KEY_HEADER, message: 'is required on every POST' },
      ]),
      { acpCode: 'idempotency_key_required' },
    );
  }
  return key;
};

/** A route's other methods: 405 (OPTIONS 204) with Allow, in ACP's Error shape. */
const otherMethods =
  (methods: readonly string[]): RequestHandler =>
  (req, res) => {
    res.set('Allow', [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', '));
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    throw new HttpProblem(
      'method-not-allowed',
      `${req.method} is not allowed here; use ${methods.join(' or ')}`,
    );
  };

/** Errors under the ACP base as ACP's `Error` object; a fault is logged and answered as processing_error. */
const acpErrors = (problems: Problems, logger: Logger): ErrorRequestHandler =>
  errorHandler(problems, logger, {
    problem: (res, problem, error) => {
      const answer = acpErrorOfProblem(problem);
      const code =
        typeof error === 'object' && error !== null && 'acpCode' in error && typeof error.acpCode === 'string'
          ? error.acpCode
          : answer.body.code;
      sendAcpError(res, { ...answer, body: { ...answer.body, code } });
    },
    fault: (req, res) =>
      sendAcpError(res, {
        status: 500,
        body: {
          type: 'processing_error',
          code: 'internal_error',
          message: `mention request id ${requestIdOf(req)} when reporting this`,
        },
      }),
  });

/**
 * ACP's Agentic Checkout API (docs/protocols.md §3.2) over the same OrderOperations as /api/ucp/checkout and UCP's
 * /api/ucp/shopping/checkout-sessions, so the three answer one session alike; only the shapes differ.
 */
export const acpCheckoutRoutes = (
  problems: Problems,
  orders: OrderOperations,
  quotes: AgreedQuotes,
  identity: IdentityService,
  bodyLimitBytes: number,
  publicBaseUrl: string,
  logger: Logger,
): Router => {
  const router = Router();
  const auth = authenticateBearer(identity);
  const body = jsonBody(bodyLimitBytes);
  const optionalBody = jsonBody(bodyLimitBytes, { optional: true });

  /** The line `quote_id` prices: the caller's own quote request (another's is a 400 naming quote_id). */
  const quotedLineOf = async (
    principal: Principal | undefined,
    quoteRequestId: number | undefined,
  ): Promise<QuotedLine | undefined> => {
    if (quoteRequestId === undefined || principal?.role !== 'buyer') return undefined;
    try {
      const quote = await quotes.status(principal, { quoteRequestId });
      return { quoteRequestId, productId: quote.product_id, quantity: quote.quantity };
    } catch (error) {
      if (isAppError(error) && error.kind === 'not_found') {
        throw validationError('invalid checkout: quote_id names no quote request of this buyer', [
          { path: 'quote_id', message: 'names no quote request of this buyer' },
        ]);
      }
      throw error;
    }
  };
  /** Without `buyer`, the session is under the account's own contact details, as an accepted quote's order. */
  const accountBuyerOf = async (principal: Principal | undefined) => {
    if (principal?.role !== 'buyer') return undefined;
    const contact = await quotes.contactOf(principal);
    return {
      email: contact.email,
      ...(contact.name === '' ? {} : { name: contact.name }),
      ...(contact.company === undefined || contact.company === '' ? {} : { company: contact.company }),
    };
  };

  router.use(ACP_CHECKOUT_PATH, acpHeaders);
  router
    .route(ACP_CHECKOUT_PATH)
    .post(auth, ...body, async (req, res) => {
      const key = requiredIdempotencyKey(req, res);
      const request = parseOrThrow(acpCreateSchema, req.body, 'checkout session');
      const principal = principalOf(req);
      const quote = await quotedLineOf(principal, request.quote_id);
      const buyer = request.buyer === undefined ? await accountBuyerOf(principal) : undefined;
      const session = await orders.createCheckout(
        principal,
        checkoutBodyOfAcp(request, quote, buyer),
        requestIdOf(req),
        key,
      );
      res.status(201).json(acpCheckoutView(publicBaseUrl, session));
    })
    .all(otherMethods(['POST']));
  router
    .route(`${ACP_CHECKOUT_PATH}/:id`)
    .get(auth, async (req, res) => {
      const { id } = parseOrThrow(checkoutIdParamsSchema, req.params, 'checkout session id');
      const { checkout, orders: placed } = await orders.getCheckout(principalOf(req), id);
      res.json(acpCheckoutView(publicBaseUrl, checkout, placed));
    })
    .post(auth, ...body, async (req, res) => {
      const key = requiredIdempotencyKey(req, res);
      const { id } = parseOrThrow(checkoutIdParamsSchema, req.params, 'checkout session id');
      const request = parseOrThrow(acpUpdateSchema, req.body, 'checkout session update');
      const principal = principalOf(req);
      const quote = await quotedLineOf(principal, request.quote_id);
      const session = await orders.updateCheckout(
        principal,
        id,
        checkoutChangesOfAcp(request, quote),
        requestIdOf(req),
        key,
      );
      res.json(acpCheckoutView(publicBaseUrl, session));
    })
    .all(otherMethods(['GET', 'POST']));
  router
    .route(`${ACP_CHECKOUT_PATH}/:id/complete`)
    .post(auth, ...body, async (req, res) => {
      const key = requiredIdempotencyKey(req, res);
      const { id } = parseOrThrow(checkoutIdParamsSchema, req.params, 'checkout session id');
      // payment_data is checked (invoice terms, net 30, the one method) and not kept: the terms are the order's.
      parseOrThrow(acpCompleteSchema, req.body, 'completion');
      const { checkout, orders: placed } = await orders.completeCheckout(
        principalOf(req),
        id,
        requestIdOf(req),
        key,
      );
      res.json(acpCheckoutView(publicBaseUrl, checkout, placed));
    })
    .all(otherMethods(['POST']));
  router
    .route(`${ACP_CHECKOUT_PATH}/:id/cancel`)
    .post(auth, ...optionalBody, async (req, res) => {
      const key = requiredIdempotencyKey(req, res);
      const { id } = parseOrThrow(checkoutIdParamsSchema, req.params, 'checkout session id');
      parseOrThrow(acpCancelSchema, req.body, 'cancellation');
      try {
        const session = await orders.cancelCheckout(principalOf(req), id, requestIdOf(req), key);
        res.json(acpCheckoutView(publicBaseUrl, session));
      } catch (error) {
        // ACP: a session that can no longer be canceled (completing or completed) is a 405.
        if (!isAppError(error) || error.kind !== 'conflict') throw error;
        res.set('Allow', '');
        sendAcpError(res, {
          status: 405,
          body: { type: 'invalid_request', code: 'not_cancelable', message: error.message },
        });
      }
    })
    .all(otherMethods(['POST']));
  // Anything else under the checkout path names no resource.
  router.use(ACP_CHECKOUT_PATH, (req) => {
    throw new HttpProblem('not-found', `no route for ${req.method} ${req.path}`);
  });
  router.use(ACP_CHECKOUT_PATH, acpErrors(problems, logger));
  return router;
};

const acpSessionDocSchema = z
  .looseObject({
    id: z.string(),
    status: z.string(),
    currency: z.string(),
    line_items: z.array(z.looseObject({})),
    totals: z.array(z.looseObject({ type: z.string(), display_text: z.string(), amount: z.number().int() })),
    fulfillment_options: z.array(z.looseObject({})),
    messages: z.array(z.looseObject({})),
    links: z.array(z.looseObject({})),
    capabilities: z.looseObject({}),
  })
  .describe('An ACP CheckoutSession (ACP 2026-04-17, Agentic Checkout)');

const ERRORS =
  ' Errors are ACP’s Error object ({type, code, message, param?}), not problem+json. Headers: API-Version ' +
  `${ACP_CHECKOUT_VERSION} (400 missing_api_version / unsupported_api_version), Authorization: Bearer <buyer API ` +
  'key or agent token>, Idempotency-Key on every POST (400 idempotency_key_required; 422 idempotency_conflict).';
const idParams = checkoutIdParamsSchema;

/** ACP's `Error` (docs/protocols.md §3.2): every 4xx of these routes, as JSON rather than problem+json. */
const acpErrorSchema = z
  .object({
    type: z.enum(['invalid_request', 'processing_error', 'service_unavailable']),
    code: z
      .string()
      .describe('missing_api_version, idempotency_key_required, idempotency_conflict, invalid, …'),
    message: z.string(),
    param: z.string().optional().describe('the offending field, as an RFC 9535 JSONPath'),
    supported_versions: z.array(z.string()).optional().describe('on API-Version errors'),
  })
  .describe('An ACP Error (ACP 2026-04-17)');
const acpError = (description: string) => ({
  description,
  schema: acpErrorSchema,
  contentType: 'application/json',
});
/** The errors of every ACP route, keyed by status: each is documented with an example of its code. */
export const ACP_ERROR_EXAMPLES = {
  400: {
    code: 'missing_api_version',
    message: 'the API-Version header is required, e.g. API-Version: 2026-04-17',
  },
  401: { code: 'unauthenticated', message: 'Authorization must be Bearer <API key or agent token>' },
  403: { code: 'forbidden', message: 'only buyer accounts check out' },
  404: { code: 'not_found', message: 'no checkout session checkout_0193a4f2-7c1e-7b4a-9d2e-5f6a7b8c9d0e' },
  405: { code: 'method_not_allowed', message: 'PUT is not allowed here; use POST' },
  409: { code: 'conflict', message: 'checkout checkout_0193a4f2-7c1e-7b4a-9d2e-5f6a7b8c9d0e was canceled' },
  413: { code: 'payload_too_large', message: 'request entity too large' },
  415: { code: 'unsupported_media_type', message: 'send the request body as application/json' },
  422: {
    code: 'idempotency_conflict',
    message: 'the idempotency key was already used for a different request',
  },
} as const;
const READ_ERRORS = {
  400: acpError('Invalid id; API-Version missing or unsupported (supported_versions lists ours)'),
  401: acpError('No valid buyer credential'),
  403: acpError('Not a buyer account'),
  404: acpError('No such session (or another buyer’s)'),
  405: acpError('Another method'),
};
const COMMON_ERRORS = {
  ...READ_ERRORS,
  400: acpError(
    'Invalid input, naming the field in param (JSONPath); API-Version missing or unsupported; Idempotency-Key ' +
      'missing (idempotency_key_required) or malformed',
  ),
  413: acpError('The body is too large'),
  415: acpError('The body is not application/json'),
  422: acpError('The Idempotency-Key was used for another request (idempotency_conflict)'),
};

export const acpCheckoutRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: ACP_CHECKOUT_PATH,
    operationId: 'createAcpCheckoutSession',
    summary: 'Create an ACP checkout session',
    description:
      'ACP 2026-04-17 Agentic Checkout over the same sessions as createCheckout: line_items[].id is a product id, ' +
      'fulfillment_details.address.country the shipping country, quote_id one of the buyer’s accepted quotes (its ' +
      'line at the agreed price). status is ready_for_payment, or requires_escalation over the bulk threshold ' +
      'with a quantity_exceeded message naming request_quote and a continue_url. Totals: items_base_amount, ' +
      'discount (0), subtotal, fulfillment (freight), tax (0: the seller invoices it), total, in cents.' +
      ERRORS,
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    idempotencyKey: 'required',
    body: acpCreateSchema,
    responses: {
      201: { description: 'The checkout session', schema: acpSessionDocSchema },
      ...COMMON_ERRORS,
    },
  },
  {
    method: 'get',
    path: `${ACP_CHECKOUT_PATH}/{id}`,
    operationId: 'getAcpCheckoutSession',
    summary: 'Get an ACP checkout session',
    description: 'The buyer’s own session as it is now, with its order once completed.' + ERRORS,
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    pathParameters: idParams,
    responses: {
      200: { description: 'The checkout session', schema: acpSessionDocSchema },
      ...READ_ERRORS,
    },
  },
  {
    method: 'post',
    path: `${ACP_CHECKOUT_PATH}/{id}`,
    operationId: 'updateAcpCheckoutSession',
    summary: 'Update an ACP checkout session',
    description:
      'Prices the buyer’s open session again with new line_items, buyer or fulfillment_details (each kept when ' +
      'absent), by the rules of create, with a new expires_at.' +
      ERRORS,
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    idempotencyKey: 'required',
    pathParameters: idParams,
    body: acpUpdateSchema,
    responses: {
      200: { description: 'The checkout session', schema: acpSessionDocSchema },
      ...COMMON_ERRORS,
      409: acpError('The session is completing, completed, canceled or expired'),
    },
  },
  {
    method: 'post',
    path: `${ACP_CHECKOUT_PATH}/{id}/complete`,
    operationId: 'completeAcpCheckoutSession',
    summary: 'Complete an ACP checkout session',
    description:
      'Places one order per line on invoice terms: payment_data is {"payment_terms": "net_30"} or ' +
      '{"handler_id": "invoice_net_30"}, the one payment handler. Completing a completed session answers it with ' +
      'its order; order is the first order, metadata.order_ids all of them.' +
      ERRORS,
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    idempotencyKey: 'required',
    pathParameters: idParams,
    body: acpCompleteSchema,
    responses: {
      200: { description: 'The completed checkout session', schema: acpSessionDocSchema },
      ...COMMON_ERRORS,
      409: acpError('The session needs a quote, was canceled, expired, or the stock ran out'),
    },
  },
  {
    method: 'post',
    path: `${ACP_CHECKOUT_PATH}/{id}/cancel`,
    operationId: 'cancelAcpCheckoutSession',
    summary: 'Cancel an ACP checkout session',
    description:
      'Cancels the buyer’s open session; canceling a canceled session answers it. The body is optional.' +
      ERRORS,
    tags: ['checkout'],
    auth: 'api_key_or_agent_token',
    idempotencyKey: 'required',
    pathParameters: idParams,
    body: acpCancelSchema,
    responses: {
      200: { description: 'The canceled checkout session', schema: acpSessionDocSchema },
      ...COMMON_ERRORS,
      405: acpError('The session is completing or completed: it can no longer be canceled (not_cancelable)'),
    },
  },
];
