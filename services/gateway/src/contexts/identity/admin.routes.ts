import { Router } from 'express';
import type { Response } from 'express';
import type { Logger } from '@marketplace/platform';
import { notFound } from '@marketplace/platform';
import type { IdentityService } from './identity.service.js';
import type { IssuedKey } from '../../edge/account.js';
import { requireAdminToken } from '../../edge/http/auth.middleware.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { accountIdSchema, createAccountBodySchema } from './admin.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';

/** The answer carries the only copy of a key: no cache may keep it. */
const sendIssuedKey = (res: Response, issued: IssuedKey): void => {
  res.status(201).set('Cache-Control', 'no-store').json({
    account_id: issued.accountId,
    role: issued.role,
    api_key: issued.apiKey,
    api_key_prefix: issued.apiKeyPrefix,
  });
};

export interface AdminRoutesOptions {
  readonly problems: Problems;
  readonly identity: IdentityService;
  readonly adminToken: string;
  readonly logger: Logger;
  readonly bodyLimitBytes: number;
}

/** The operators' account API; only mounted when ADMIN_TOKEN is set. Logs name keys by prefix only. */
export const adminRoutes = ({
  problems,
  identity,
  adminToken,
  logger,
  bodyLimitBytes,
}: AdminRoutesOptions): Router => {
  const router = Router();
  router.use('/api/admin', requireAdminToken(adminToken));
  router
    .route('/api/admin/accounts')
    .post(...jsonBody(bodyLimitBytes), async (req, res) => {
      const draft = parseOrThrow(createAccountBodySchema, req.body, 'account');
      const issued = await identity.createAccount(draft);
      logger.info(
        { accountId: issued.accountId, role: issued.role, keyPrefix: issued.apiKeyPrefix },
        'account created',
      );
      sendIssuedKey(res, issued);
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/admin/accounts/:accountId/api-keys')
    .post(async (req, res) => {
      const accountId = accountIdSchema.safeParse(req.params.accountId);
      if (!accountId.success) throw notFound(`no account ${req.params.accountId}`);
      const issued = await identity.issueApiKey(accountId.data);
      logger.info({ accountId: issued.accountId, keyPrefix: issued.apiKeyPrefix }, 'api key issued');
      sendIssuedKey(res, issued);
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/admin/api-keys/:prefix')
    .delete(async (req, res) => {
      await identity.revokeApiKey(req.params.prefix);
      logger.info({ keyPrefix: req.params.prefix }, 'api key revoked');
      res.status(204).end();
    })
    .all(methodNotAllowed(problems, ['DELETE']));
  return router;
};
