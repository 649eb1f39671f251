import { Router } from 'express';
import { escapeHtml } from '@marketplace/platform';
import type { SubscriptionCommands } from './subscription.commands.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import { emailConfirmationQuerySchema, emailConfirmedSchema } from './subscription.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

const PATH = '/api/email-confirmation';

/**
 * The link of the confirmation email an email channel's new address receives (double opt-in, docs/security.md,
 * API6). As with the unsubscribe link, GET only shows a page whose button POSTs: mail scanners and link
 * previews follow GET links, and must not confirm an address for whoever typed it.
 */
export const emailConfirmationRoutes = (problems: Problems, subscriptions: SubscriptionCommands): Router => {
  const router = Router();
  router
    .route(PATH)
    .get((req, res) => {
      const { token } = parseOrThrow(emailConfirmationQuerySchema, req.query, 'confirmation link');
      res.set('Cache-Control', 'no-store').type('html').send(confirmationPage(token));
    })
    .post(async (req, res) => {
      const { token } = parseOrThrow(emailConfirmationQuerySchema, req.query, 'confirmation link');
      const confirmed = await subscriptions.confirmEmail(token, requestIdOf(req));
      res.set('Cache-Control', 'no-store');
      // The page's form (a browser asks for HTML) gets a page; any other client the JSON answer.
      if (req.accepts(['json', 'html']) === 'html') res.type('html').send(CONFIRMED_PAGE);
      else res.json(confirmed);
    })
    .all(methodNotAllowed(problems, ['GET', 'POST']));
  return router;
};

const page = (title: string, body: string): string =>
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">' +
  `<meta name="viewport" content="width=device-width"><title>${title}</title></head><body>${body}</body></html>`;

/** The token is URL-encoded, then escaped: nothing in it can close the attribute. */
const confirmationPage = (token: string): string =>
  page(
    'Confirm your email address',
    '<h1>Receive saved-search matches at this address?</h1><p>A saved search asked for new matching lots ' +
      'to be emailed here. Nothing is sent until you confirm.</p>' +
      `<form method="post" action="${PATH}?token=${escapeHtml(encodeURIComponent(token))}">` +
      '<button type="submit">Confirm</button></form>',
  );

const CONFIRMED_PAGE = page(
  'Address confirmed',
  '<h1>Address confirmed</h1><p>Matches of the saved searches that name this address are emailed to it from ' +
    'now on. Each email has a link to end its saved search.</p>',
);

export const emailConfirmationRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: PATH,
    operationId: 'emailConfirmationPage',
    summary: 'The link of a confirmation email: a page with a button, which changes nothing',
    description:
      'An email channel receives matches only once its address is confirmed (double opt-in). GET shows an HTML ' +
      'page whose button POSTs to the same URL: mail scanners and link previews follow GET links, so a GET ' +
      'never confirms.',
    tags: ['subscriptions'],
    auth: 'none',
    query: emailConfirmationQuerySchema,
    responses: {
      200: { description: 'The confirmation page', contentType: 'text/html', text: true },
      400: 'No token',
    },
  },
  {
    method: 'post',
    path: PATH,
    operationId: 'confirmEmail',
    summary: 'Confirm an email address with the token of its confirmation link (the page’s button)',
    description:
      'Confirms the address (case and +tag folded) for every saved search that names it, present and later. ' +
      'Single use; links expire after 7 days. Answers an HTML page to a client that prefers text/html (the ' +
      'page’s form), JSON otherwise. Any request body is ignored: the token is in the query.',
    tags: ['subscriptions'],
    auth: 'none',
    query: emailConfirmationQuerySchema,
    responses: {
      200: { description: 'Confirmed', schema: emailConfirmedSchema },
      400: 'No token, or a token this marketplace did not sign, or an expired link (errors name token)',
      409: 'The link was used already: the address is confirmed',
    },
  },
];
