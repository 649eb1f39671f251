import { Router } from 'express';
import { dollarsToCents, notFound, parseProductId } from '@marketplace/platform';
import type { CatalogQueries } from '../../application/catalog.queries.js';
import type { IdentityService } from '../../application/identity.service.js';
import { authenticateApiKey, principalOf } from '../auth.middleware.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import type { Problems } from '../problem.js';
import { catalogSearchQuerySchema } from '../schemas/catalog-search.schema.js';
import { parseOrThrow } from '../schemas/validate.js';

const centsOf = (dollars: string | undefined): number | undefined =>
  dollars === undefined ? undefined : dollarsToCents(Number(dollars));

/** The anonymous catalog (spec 4.1): search, categories and product details. */
export const catalogRoutes = (
  problems: Problems,
  catalog: CatalogQueries,
  identity: IdentityService,
): Router => {
  const router = Router();
  router
    .route('/api/ucp/catalog/products')
    .get(async (req, res) => {
      const query = parseOrThrow(catalogSearchQuerySchema, req.query, 'query parameters');
      res.json(
        await catalog.search({
          query: query.q,
          category: query.category,
          condition: query.condition,
          minPriceCents: centsOf(query.min_price),
          maxPriceCents: centsOf(query.max_price),
          limit: query.limit,
          offset: query.offset,
        }),
      );
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/ucp/catalog/categories')
    .get(async (_req, res) => {
      res.json(await catalog.categories());
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/ucp/catalog/products/:productId')
    .get(authenticateApiKey(identity, { required: false }), async (req, res) => {
      const { productId } = req.params;
      // A malformed id names no product: 404 like an unknown one, without asking the catalog.
      if (parseProductId(productId) === undefined) throw notFound(`no product ${productId}`);
      res.json(await catalog.details(productId, principalOf(req)));
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};
