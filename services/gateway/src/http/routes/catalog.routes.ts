import { Router } from 'express';
import { dollarsToCents, notFound, parseProductId } from '@marketplace/platform';
import type { CatalogQueries } from '../../application/catalog.queries.js';
import type { IdentityService } from '../../application/identity.service.js';
import { authenticate, principalOf } from '../auth.middleware.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import type { Problems } from '../problem.js';
import { jsonBody } from '../json-body.js';
import { catalogSearchQuerySchema } from '../schemas/catalog-search.schema.js';
import { semanticSearchBodySchema } from '../schemas/catalog-semantic-search.schema.js';
import { parseOrThrow } from '../schemas/validate.js';

/** A 1,000-character query and the filters fit many times over, even with every character escaped. */
const SEMANTIC_SEARCH_BODY_LIMIT_BYTES = 16 * 1024;

const centsOf = (dollars: string | undefined): number | undefined =>
  dollars === undefined ? undefined : dollarsToCents(Number(dollars));

/** The anonymous catalog (spec 4.1): search, semantic search, categories and product details. */
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
    .route('/api/ucp/catalog/search')
    .post(...jsonBody(SEMANTIC_SEARCH_BODY_LIMIT_BYTES), async (req, res) => {
      const body = parseOrThrow(semanticSearchBodySchema, req.body, 'semantic search');
      // 503 when the catalog runs without an embedding provider (spec 7), from its `unavailable` answer.
      res.json(
        await catalog.semanticSearch({
          query: body.query,
          category: body.category,
          condition: body.condition,
          maxPriceCents: body.max_price,
          limit: body.limit,
        }),
      );
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/ucp/catalog/categories')
    .get(async (_req, res) => {
      res.json(await catalog.categories());
    })
    .all(methodNotAllowed(problems, ['GET']));
  router
    .route('/api/ucp/catalog/products/:productId')
    .get(authenticate(identity, { required: false }), async (req, res) => {
      const { productId } = req.params;
      // A malformed id names no product: 404 like an unknown one, without asking the catalog.
      if (parseProductId(productId) === undefined) throw notFound(`no product ${productId}`);
      res.json(await catalog.details(productId, principalOf(req)));
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};
