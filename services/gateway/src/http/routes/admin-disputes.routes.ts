import { Router } from 'express';
import type { OrderOperations } from '../../application/order.operations.js';
import { requireAdminToken } from '../auth.middleware.js';
import { jsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import type { Problems } from '../problem.js';
import { requestIdOf } from '../request-log.js';
import {
  disputeListQuerySchema,
  orderIdParamsSchema,
  resolveDisputeBodySchema,
} from '../schemas/order.schema.js';
import { parseOrThrow } from '../schemas/validate.js';

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
