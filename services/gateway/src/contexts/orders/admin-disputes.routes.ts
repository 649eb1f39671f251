import { Router } from 'express';
import type { OrderOperations } from './order.operations.js';
import { requireAdminToken } from '../../edge/http/auth.middleware.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import { disputeListQuerySchema, orderIdParamsSchema, resolveDisputeBodySchema } from './order.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';

/**
 * The operator's dispute desk (docs/specification.md, "Disputes"): disputed orders, and their resolution. Mounted
 * only with ADMIN_TOKEN and the order service.
 */
export const adminDisputesRoutes = (
  problems: Problems,
  orders: OrderOperations,
  adminToken: string,
  bodyLimitBytes: number,
): Router => {
  const router = Router();
  const admin = requireAdminToken(adminToken);
  router
    .route('/api/admin/disputes')
    .get(admin, async (req, res) => {
      const query = parseOrThrow(disputeListQuerySchema, req.query, 'query parameters');
      res.set('Cache-Control', 'no-store').json(await orders.listDisputes(query));
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/admin/disputes/:id/resolve')
    .post(admin, ...jsonBody(bodyLimitBytes), async (req, res) => {
      const { id } = parseOrThrow(orderIdParamsSchema, req.params, 'order id');
      const body = parseOrThrow(resolveDisputeBodySchema, req.body, 'resolution');
      res.json(await orders.resolveDispute(Number(id), body, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};
