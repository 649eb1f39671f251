import { Router } from 'express';
import type { Problems } from './problem.js';
import { sendProblem } from './problem.js';
import { methodNotAllowed } from './method-not-allowed.js';

export interface ReadinessReport {
  readonly ready: boolean;
  /** Names of the checks that failed (`listing`, `catalog`, `identity`...). */
  readonly failing: readonly string[];
}

/** `/healthz`: the process answers. `/readyz`: the backends serve and the identity schema is usable. */
export const healthRoutes = (problems: Problems, readiness: () => Promise<ReadinessReport>): Router => {
  const router = Router();
  router
    .route('/healthz')
    .get((_req, res) => {
      res.json({ status: 'ok' });
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/readyz')
    .get(async (_req, res) => {
      const report = await readiness();
      if (report.ready) {
        res.json({ status: 'ready' });
        return;
      }
      sendProblem(res, problems.of('service-unavailable', `not ready: ${report.failing.join(', ')}`));
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};
