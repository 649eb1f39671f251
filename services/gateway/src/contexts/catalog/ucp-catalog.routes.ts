import { Router } from 'express';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import { UCP_SHOPPING_PATH } from '../../edge/ucp.js';
import type { CatalogQueries } from './catalog.queries.js';
import {
  MAX_LOOKUP_IDS,
  ucpCatalogOperations,
  ucpGetProductRequestSchema,
  ucpGetProductResponseOutput,
  ucpLookupRequestSchema,
  ucpLookupResponseOutput,
  ucpSearchRequestSchema,
  ucpSearchResponseOutput,
} from './ucp-catalog.js';

/** The REST binding's paths under the UCP shopping service's endpoint (docs/protocols.md §2.4, "REST"). */
export const UCP_CATALOG_PATHS = {
  search: `${UCP_SHOPPING_PATH}/catalog/search`,
  lookup: `${UCP_SHOPPING_PATH}/catalog/lookup`,
  product: `${UCP_SHOPPING_PATH}/catalog/product`,
} as const;

/** 50 ids of 200 characters, escaped, fit with room to spare; a query of 1,000 characters too. */
const UCP_CATALOG_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * UCP catalog search and lookup over REST (docs/protocols.md §2.4): anonymous, public listings only, counted
 * against the catalog-read allowance like the other catalog reads (edge/app.ts).
 */
export const ucpCatalogRoutes = (
  problems: Problems,
  catalog: CatalogQueries,
  publicBaseUrl: string,
): Router => {
  const router = Router();
  const operations = ucpCatalogOperations(catalog, publicBaseUrl);
  router
    .route(UCP_CATALOG_PATHS.search)
    .post(...jsonBody(UCP_CATALOG_BODY_LIMIT_BYTES), async (req, res) => {
      res.json(await operations.search(parseOrThrow(ucpSearchRequestSchema, req.body, 'catalog search')));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route(UCP_CATALOG_PATHS.lookup)
    .post(...jsonBody(UCP_CATALOG_BODY_LIMIT_BYTES), async (req, res) => {
      res.json(await operations.lookup(parseOrThrow(ucpLookupRequestSchema, req.body, 'catalog lookup')));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route(UCP_CATALOG_PATHS.product)
    .post(...jsonBody(UCP_CATALOG_BODY_LIMIT_BYTES), async (req, res) => {
      res.json(
        await operations.getProduct(parseOrThrow(ucpGetProductRequestSchema, req.body, 'get product')),
      );
    })
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

const tooLarge = `The body is larger than ${UCP_CATALOG_BODY_LIMIT_BYTES / 1024} KiB`;

export const ucpCatalogRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: UCP_CATALOG_PATHS.search,
    operationId: 'searchUcpCatalog',
    summary: 'UCP catalog search',
    description:
      'UCP 2026-04-08 catalog search (dev.ucp.shopping.catalog.search) over the same search as searchProducts: ' +
      'query (all words must match), filters.categories (one category id), filters.price {min, max} in cents, ' +
      'filters.condition; pagination {cursor, limit 1-100, default 10}. A query or a filter is required. Each ' +
      'lot is a product with one variant whose id is the product id.',
    tags: ['catalog'],
    // Anonymous; a credential sent is checked by the catalog-read allowance (edge/app.ts), which counts per key.
    auth: 'api_key_optional',
    rateLimited: true,
    body: ucpSearchRequestSchema,
    responses: {
      200: { description: 'One page of UCP products', schema: ucpSearchResponseOutput },
      400: 'Invalid body, an unknown filter or cursor, or neither query nor filter (each field in errors)',
      413: tooLarge,
    },
  },
  {
    method: 'post',
    path: UCP_CATALOG_PATHS.lookup,
    operationId: 'lookupUcpCatalog',
    summary: 'UCP catalog lookup by product ids',
    description:
      `UCP 2026-04-08 catalog lookup (dev.ucp.shopping.catalog.lookup): 1 to ${MAX_LOOKUP_IDS} product (= variant) ` +
      'ids, deduplicated; each public lot found once with inputs [{id, match: exact}], an info message not_found ' +
      'per other id. filters are not supported here (400).',
    tags: ['catalog'],
    // Anonymous; a credential sent is checked by the catalog-read allowance (edge/app.ts), which counts per key.
    auth: 'api_key_optional',
    rateLimited: true,
    body: ucpLookupRequestSchema,
    responses: {
      200: { description: 'The UCP products found', schema: ucpLookupResponseOutput },
      400: `Invalid body, filters, or more than ${MAX_LOOKUP_IDS} ids (request_too_large), naming the field`,
      413: tooLarge,
    },
  },
  {
    method: 'post',
    path: UCP_CATALOG_PATHS.product,
    operationId: 'getUcpProduct',
    summary: 'UCP catalog product detail',
    description:
      'UCP 2026-04-08 get_product (dev.ucp.shopping.catalog.lookup): one product (= variant) id. An unknown id ' +
      'answers 200 with ucp.status error and a not_found message, as UCP specifies.',
    tags: ['catalog'],
    // Anonymous; a credential sent is checked by the catalog-read allowance (edge/app.ts), which counts per key.
    auth: 'api_key_optional',
    rateLimited: true,
    body: ucpGetProductRequestSchema,
    responses: {
      200: { description: 'The UCP product, or a not_found message', schema: ucpGetProductResponseOutput },
      400: 'Invalid body or filters, naming the field',
      413: tooLarge,
    },
  },
];
