import { Router } from 'express';
import type { IdentityService } from '../../application/identity.service.js';
import type { SubscriptionCommands } from '../../application/subscription.commands.js';
import { authenticate, principalOf } from '../auth.middleware.js';
import { jsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import type { Problems } from '../problem.js';
import { requestIdOf } from '../request-log.js';
import {
  subscribeInputSchema,
  subscriptionIdParamsSchema,
  unsubscribeQuerySchema,
} from '../schemas/subscription.schema.js';
import { parseOrThrow } from '../schemas/validate.js';

/**
 * Saved searches over REST, beside the subscribe_to_query tool: create (anyone; anonymous with webhook and
 * email only), list and delete (the owner), unsubscribe by token (the link in match emails), and the pollable
 * resource of spec 4.3 (the owner only).
 */
export const subscriptionsRoutes = (
  problems: Problems,
  subscriptions: SubscriptionCommands,
  identity: IdentityService,
  bodyLimitBytes: number,
): Router => {
  const router = Router();
  // Optional at the edge: SubscriptionCommands answers 401 for the owner-only operations itself.
  const caller = authenticate(identity, { required: false });
  router
    .route('/api/subscriptions')
    .post(caller, ...jsonBody(bodyLimitBytes), async (req, res) => {
      const input = parseOrThrow(subscribeInputSchema, req.body, 'subscription');
      const created = await subscriptions.subscribe(principalOf(req), input, requestIdOf(req));
      res.status(201).location(`/api/subscriptions/${created.id}`).json(created);
    })
    .get(caller, async (req, res) => {
      res.json(await subscriptions.list(principalOf(req)));
    })
    .all(methodNotAllowed(problems, ['GET', 'POST']));
  router
    .route('/api/subscriptions/:id')
    .delete(caller, async (req, res) => {
      const { id } = parseOrThrow(subscriptionIdParamsSchema, req.params, 'subscription id');
      const token = typeof req.query['token'] === 'string' ? req.query['token'] : undefined;
      await subscriptions.delete(principalOf(req), id, token, requestIdOf(req));
      res.status(204).end();
    })
    .all(methodNotAllowed(problems, ['DELETE']));
  // The link in every match email: a plain GET, as mail clients follow links; the token names one subscription.
  router
    .route('/api/subscriptions/:id/unsubscribe')
    .get(async (req, res) => {
      const { id } = parseOrThrow(subscriptionIdParamsSchema, req.params, 'subscription id');
      const { token } = parseOrThrow(unsubscribeQuerySchema, req.query, 'unsubscribe link');
      await subscriptions.delete(undefined, id, token, requestIdOf(req));
      res.json({ id, unsubscribed: true });
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/mcp/resources/subscriptions/:id')
    .get(caller, async (req, res) => {
      const { id } = parseOrThrow(subscriptionIdParamsSchema, req.params, 'subscription id');
      res.json(await subscriptions.resource(principalOf(req), id));
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};
