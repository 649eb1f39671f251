import { Router } from 'express';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import type { SubscriptionCommands } from './subscription.commands.js';
import { channelEmailsOf } from './subscription.commands.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import type { RateLimiter } from '../../edge/http/rate-limit.js';
import { clientAddressOfRequest, rateLimit } from '../../edge/http/rate-limit.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import type { RotateSecretInput, SubscribeInput } from './subscription.schema.js';
import {
  deleteSubscriptionQuerySchema,
  rotatedSecretSchema,
  rotateSecretInputSchema,
  subscribeInputSchema,
  subscribeOutputSchema,
  subscriptionIdParamsSchema,
  subscriptionListSchema,
  subscriptionResourceSchema,
  unsubscribedSchema,
  unsubscribeQuerySchema,
} from './subscription.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/**
 * Saved searches over REST, beside the subscribe_to_query tool: create (anyone; anonymous with webhook and
 * email only), list and delete (the owner), unsubscribe by token (the link in match emails), and the pollable
 * resource of docs/specification.md, "MCP tools" (the owner only).
 */
export const subscriptionsRoutes = (
  problems: Problems,
  subscriptions: SubscriptionCommands,
  identity: IdentityService,
  bodyLimitBytes: number,
  limiter: RateLimiter,
): Router => {
  const router = Router();
  // Optional at the edge: SubscriptionCommands answers 401 for the owner-only operations itself.
  const caller = authenticate(identity, { required: false });
  router
    .route('/api/subscriptions')
    .post(
      caller,
      ...jsonBody(bodyLimitBytes),
      (req, _res, next) => {
        // Validated before the limit counts: the per-mailbox limit needs the channels' addresses.
        req.body = parseOrThrow(subscribeInputSchema, req.body, 'subscription');
        next();
      },
      rateLimit(limiter, (req) =>
        limiter.subscriptionChecks(
          principalOf(req),
          clientAddressOfRequest(req),
          channelEmailsOf(req.body as SubscribeInput),
        ),
      ),
      async (req, res) => {
        const input = req.body as SubscribeInput;
        const created = await subscriptions.subscribe(principalOf(req), input, requestIdOf(req));
        res.status(201).location(`/api/subscriptions/${created.id}`).json(created);
      },
    )
    .get(caller, async (req, res) => {
      res.json(await subscriptions.list(principalOf(req)));
    })
    .all(methodNotAllowed(problems, ['GET', 'POST']));
  router
    .route('/api/subscriptions/:id')
    .delete(caller, async (req, res) => {
      const { id } = parseOrThrow(subscriptionIdParamsSchema, req.params, 'subscription id');
      const { token } = parseOrThrow(deleteSubscriptionQuerySchema, req.query, 'subscription query');
      await subscriptions.delete(principalOf(req), id, token, requestIdOf(req));
      res.status(204).end();
    })
    .all(methodNotAllowed(problems, ['DELETE']));
  router
    .route('/api/subscriptions/:id/rotate-secret')
    .post(caller, ...jsonBody(bodyLimitBytes, { optional: true }), async (req, res) => {
      const { id } = parseOrThrow(subscriptionIdParamsSchema, req.params, 'subscription id');
      const input: RotateSecretInput = parseOrThrow(rotateSecretInputSchema, req.body ?? {}, 'rotation');
      const rotated = await subscriptions.rotateSecret(
        principalOf(req),
        id,
        input.current_secret,
        requestIdOf(req),
      );
      res.set('Cache-Control', 'no-store').json(rotated);
    })
    .all(methodNotAllowed(problems, ['POST']));
  // The link in every match email. GET only shows a page whose button POSTs: mail scanners and link previews
  // follow GET links, and must not end anyone's subscription (docs/security.md, "API6").
  router
    .route('/api/subscriptions/:id/unsubscribe')
    .get((req, res) => {
      const { id } = parseOrThrow(subscriptionIdParamsSchema, req.params, 'subscription id');
      const { token } = parseOrThrow(unsubscribeQuerySchema, req.query, 'unsubscribe link');
      res.set('Cache-Control', 'no-store').type('html').send(unsubscribeConfirmationPage(id, token));
    })
    .post(async (req, res) => {
      const { id } = parseOrThrow(subscriptionIdParamsSchema, req.params, 'subscription id');
      const { token } = parseOrThrow(unsubscribeQuerySchema, req.query, 'unsubscribe link');
      await subscriptions.delete(undefined, id, token, requestIdOf(req));
      res.set('Cache-Control', 'no-store');
      // The page's form (a browser asks for HTML) gets a page; any other client the JSON answer.
      if (req.accepts(['json', 'html']) === 'html') res.type('html').send(UNSUBSCRIBED_PAGE);
      else res.json({ id, unsubscribed: true });
    })
    .all(methodNotAllowed(problems, ['GET', 'POST']));
  router
    .route('/api/mcp/resources/subscriptions/:id')
    .get(caller, async (req, res) => {
      const { id } = parseOrThrow(subscriptionIdParamsSchema, req.params, 'subscription id');
      res.json(await subscriptions.resource(principalOf(req), id));
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};

const page = (title: string, body: string): string =>
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">' +
  `<meta name="viewport" content="width=device-width"><title>${title}</title></head><body>${body}</body></html>`;

/**
 * The page of the unsubscribe link: a button that POSTs to the same URL. The id is `sub_<hex>` (validated) and
 * the token is URL-encoded, which leaves nothing HTML could read as markup inside the quoted attribute.
 */
const unsubscribeConfirmationPage = (id: string, token: string): string =>
  page(
    'Unsubscribe from a saved search',
    '<h1>Stop these emails?</h1><p>This ends the saved search: no more matches are sent to any of its ' +
      'channels.</p>' +
      `<form method="post" action="/api/subscriptions/${id}/unsubscribe?token=${encodeURIComponent(token)}">` +
      '<button type="submit">Unsubscribe</button></form>',
  );

const UNSUBSCRIBED_PAGE = page(
  'Unsubscribed',
  '<h1>Unsubscribed</h1><p>The saved search has ended; nothing more will be sent.</p>',
);

const INVALID_SUBSCRIPTION_ID = 'The id is not a subscription id (sub_<24 hex digits>)';
const NOT_THE_OWNERS = 'No such subscription of this caller (another caller’s is not found either)';

export const subscriptionsRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/api/subscriptions',
    operationId: 'subscribe',
    summary: 'Save a search and be notified of new matching public lots (subscribe_to_query over REST)',
    description:
      'Channels: webhook (signed POST), email (double opt-in: an address not confirmed yet gets one ' +
      'confirmation email and no match until it is confirmed at /api/email-confirmation; its channel shows ' +
      'status pending_confirmation), mcp_resource (the owner polls it), each destination once (one ' +
      'mailbox, case and +tag folded, in one channel only). Anonymous callers may use webhook and email only ' +
      'and end the subscription with the unsubscribe_token, shown once; with a webhook channel, webhook_secret ' +
      '(whsec_…, shown once) is the key of its X-Marketplace-Signature. Unknown query keys are stored and ' +
      'ignored. Rate-limited per client IP (anonymous: 10 per hour) or per key (100 per hour), and per mailbox ' +
      'of each email channel (5 new saved searches per hour, whoever asks).',
    tags: ['subscriptions'],
    auth: 'api_key_or_agent_token_optional',
    rateLimited: true,
    body: subscribeInputSchema,
    responses: {
      201: { description: 'The subscription', schema: subscribeOutputSchema },
      400: 'Invalid query or channels, or a destination twice (each offending field in errors)',
    },
  },
  {
    method: 'get',
    path: '/api/subscriptions',
    operationId: 'listSubscriptions',
    summary: 'The caller’s saved searches',
    tags: ['subscriptions'],
    auth: 'api_key_or_agent_token',
    responses: { 200: { description: 'The subscriptions', schema: subscriptionListSchema } },
  },
  {
    method: 'delete',
    path: '/api/subscriptions/{id}',
    operationId: 'deleteSubscription',
    summary: 'End a subscription: its owner, or anyone with its unsubscribe token',
    tags: ['subscriptions'],
    auth: 'api_key_or_agent_token_optional',
    pathParameters: subscriptionIdParamsSchema,
    query: deleteSubscriptionQuerySchema,
    responses: {
      204: { description: 'Ended' },
      400: 'Invalid subscription id or token',
      401: 'Neither a valid credential nor a token',
      404: NOT_THE_OWNERS,
    },
  },
  {
    method: 'post',
    path: '/api/subscriptions/{id}/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Issue a new webhook signing secret (rotate_webhook_secret over REST)',
    description:
      'The owner (API key or agent token), or, for an anonymous subscription, whoever sends current_secret: the ' +
      'secret that signs now, or the previous one while it still signs. The new secret is shown once and signs ' +
      'every delivery from now on; for 24 hours deliveries carry a second v1= entry in X-Marketplace-Signature ' +
      'made with the previous secret, so a receiver can switch at its own pace. The body may be empty.',
    tags: ['subscriptions'],
    auth: 'api_key_or_agent_token_optional',
    pathParameters: subscriptionIdParamsSchema,
    body: rotateSecretInputSchema,
    responses: {
      200: { description: 'The new secret', schema: rotatedSecretSchema },
      400: 'Invalid subscription id or body',
      401: 'Neither a valid credential nor a current secret',
      404: 'No such subscription of this caller, or not a secret that signs its deliveries',
      409: 'The subscription has no webhook channel',
    },
  },
  {
    method: 'get',
    path: '/api/subscriptions/{id}/unsubscribe',
    operationId: 'unsubscribePage',
    summary: 'The unsubscribe link of match emails: a confirmation page, which changes nothing',
    description:
      'An HTML page whose button POSTs to the same URL. Mail scanners and link previews follow GET links, so ' +
      'a GET never ends a subscription.',
    tags: ['subscriptions'],
    auth: 'none',
    pathParameters: subscriptionIdParamsSchema,
    query: unsubscribeQuerySchema,
    responses: {
      200: { description: 'The confirmation page', contentType: 'text/html', text: true },
      400: 'Invalid subscription id, or no token',
      404: 'A path that is not percent-encoded UTF-8',
    },
  },
  {
    method: 'post',
    path: '/api/subscriptions/{id}/unsubscribe',
    operationId: 'unsubscribe',
    summary: 'End a subscription with its token (the confirmation page’s button)',
    description:
      'Answers an HTML page to a client that prefers text/html (the page’s form), JSON otherwise. Any request ' +
      'body is ignored: the token is in the query.',
    tags: ['subscriptions'],
    auth: 'none',
    pathParameters: subscriptionIdParamsSchema,
    query: unsubscribeQuerySchema,
    responses: {
      200: { description: 'Ended', schema: unsubscribedSchema },
      400: 'Invalid subscription id, or no token',
      404: 'No such subscription, or not its token',
    },
  },
  {
    method: 'get',
    path: '/api/mcp/resources/subscriptions/{id}',
    operationId: 'getSubscriptionResource',
    summary:
      'A subscription’s recent matches and delivery states (marketplace://subscriptions/{id} over REST)',
    tags: ['subscriptions'],
    auth: 'api_key_or_agent_token',
    pathParameters: subscriptionIdParamsSchema,
    responses: {
      200: { description: 'The resource', schema: subscriptionResourceSchema },
      400: INVALID_SUBSCRIPTION_ID,
      404: NOT_THE_OWNERS,
    },
  },
];
