import { Router } from 'express';
import { z } from 'zod';
import type { Logger } from '@marketplace/platform';
import { toIso } from '@marketplace/platform';
import type { IdentityService } from './identity.service.js';
import { authenticate, authenticatedPrincipalOf } from '../../edge/http/auth.middleware.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/**
 * `POST /api/agent-tokens` (docs/specification.md, "Accounts, keys and tokens"): a buyer trades its X-MCP-API-Key for a
 * signed agent token, answered 201 `{token, expires_at}`. No body. The token is logged by session id only.
 */
export const agentTokensRoutes = (problems: Problems, identity: IdentityService, logger: Logger): Router => {
  const router = Router();
  router
    .route('/api/agent-tokens')
    .post(authenticate(identity, { required: true }), async (req, res) => {
      const buyer = authenticatedPrincipalOf(req);
      const issued = await identity.issueAgentToken(buyer);
      logger.info({ accountId: buyer.accountId, sessionId: issued.sessionId }, 'agent token issued');
      res
        .status(201)
        .set('Cache-Control', 'no-store')
        .json({ token: issued.token, expires_at: toIso(issued.expiresAtMs) });
    })
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

export const agentTokensRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/api/agent-tokens',
    operationId: 'issueAgentToken',
    summary: 'Trade a buyer API key for a signed agent token',
    description:
      'The token is <sessionId>.<expiresMs>.<buyerUserId>.<base64url HMAC-SHA256 of the first three parts>, ' +
      'valid one hour; send it as X-Agent-Token wherever a buyer may authenticate. No body.',
    tags: ['authentication'],
    auth: 'api_key',
    responses: {
      201: {
        description: 'The token, shown once',
        schema: z.object({ token: z.string(), expires_at: z.string().describe('ISO 8601') }),
      },
      401: 'No valid X-MCP-API-Key',
      403: 'Not a buyer key (or an agent token)',
    },
  },
];
