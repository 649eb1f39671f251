import { Router } from 'express';
import { z } from 'zod';
import { dollarsToCents, notFound, parseProductId } from '@marketplace/platform';
import type { CatalogQueries } from './catalog.queries.js';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import { authenticate, principalOf } from '../../edge/http/auth.middleware.js';
import { semanticMatchesOutput } from './catalog-semantic.tools.js';
import { productDetailsOutput } from '../../edge/product.views.js';
import { productPageOutput } from './catalog.tools.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { catalogSearchQuerySchema } from './catalog-search.schema.js';
import { semanticSearchBodySchema } from './catalog-semantic-search.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';

/** A 1,000-character query and the filters fit many times over, even with every character escaped. */
const SEMANTIC_SEARCH_BODY_LIMIT_BYTES = 16 * 1024;

const centsOf = (dollars: string | undefined): number | undefined =>
  dollars === undefined ? undefined : dollarsToCents(Number(dollars));

/** The anonymous catalog (docs/specification.md, "Catalog endpoints"): search, semantic search, categories and product details. */
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
      // 503 when the catalog runs without an embedding provider (docs/specification.md, "Errors"), from its `unavailable` answer.
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

const categoryListOutput = z.object({
  categories: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      product_count: z.number().int().describe('publicly promoted, in-stock listings'),
    }),
  ),
});

export const catalogRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/api/ucp/catalog/products',
    operationId: 'searchProducts',
    summary: 'Search public listings by words and filters',
    description:
      'All words must match the title or description (best match first); without q, newest first. Prices in ' +
      'dollars; out-of-range parameters are 400s naming the parameter.',
    tags: ['catalog'],
    auth: 'api_key_optional',
    rateLimited: true,
    query: catalogSearchQuerySchema,
    responses: {
      200: { description: 'One page of products and the total', schema: productPageOutput },
      400: 'Invalid query parameters (each in errors)',
    },
  },
  {
    method: 'post',
    path: '/api/ucp/catalog/search',
    operationId: 'semanticSearchProducts',
    summary: 'Find public listings by meaning, with a similarity score',
    description:
      'The query is embedded and the nearest public listings are taken, then category, condition and max_price ' +
      '(cents per unit) filter those candidates. similarity is the cosine of the two embeddings in [0, 1].',
    tags: ['catalog'],
    auth: 'api_key_optional',
    rateLimited: true,
    body: semanticSearchBodySchema,
    responses: {
      200: { description: 'Matches, most similar first', schema: semanticMatchesOutput },
      400: 'Invalid body (each offending field in errors)',
      413: `The body is larger than ${SEMANTIC_SEARCH_BODY_LIMIT_BYTES / 1024} KiB`,
      503: 'The embedding provider is not configured (EMBEDDINGS_PROVIDER=none) or did not answer',
    },
  },
  {
    method: 'get',
    path: '/api/ucp/catalog/categories',
    operationId: 'listCategories',
    summary: 'Every category with its number of public, in-stock listings',
    tags: ['catalog'],
    auth: 'api_key_optional',
    rateLimited: true,
    responses: { 200: { description: 'The categories', schema: categoryListOutput } },
  },
  {
    method: 'get',
    path: '/api/ucp/catalog/products/{productId}',
    operationId: 'getProductDetails',
    summary: 'Pricing, condition, seller and availability of one listing',
    description: 'A listing that was not promoted is 404 to everyone but its own seller.',
    tags: ['catalog'],
    auth: 'api_key_or_agent_token_optional',
    rateLimited: true,
    pathParameters: z.object({ productId: z.string().describe('product_<n>') }),
    responses: {
      200: { description: 'The product details', schema: productDetailsOutput },
      404: 'No such product, a malformed id, or a listing the caller may not see',
    },
  },
];
