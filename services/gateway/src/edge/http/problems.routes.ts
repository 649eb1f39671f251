import { Router } from 'express';
import type { Problems } from './problem.js';
import { isProblemSlug, PROBLEM_TYPES } from './problem.js';
import { methodNotAllowed } from './method-not-allowed.js';
import { notFound } from '@marketplace/platform';

/** Makes every problem `type` URI resolve to a description of that problem type. */
export const problemsRoutes = (problems: Problems): Router => {
  const router = Router();
  router
    .route('/problems/:slug')
    .get((req, res) => {
      const { slug } = req.params;
      if (!isProblemSlug(slug)) throw notFound(`no problem type ${slug}`);
      res.json({ type: problems.typeUri(slug), ...PROBLEM_TYPES[slug] });
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};
