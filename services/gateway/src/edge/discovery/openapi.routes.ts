import { Router } from 'express';
import { mcpRouteDocs } from '../mcp/mcp.routes.js';
import { CONTEXT_ROUTE_DOCS } from '../contexts.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { Problems } from '../http/problem.js';
import { asyncApiRouteDocs } from './asyncapi.routes.js';
import { DISCOVERY_CACHE_CONTROL, discoveryRouteDocs, sendDocument } from './discovery.routes.js';
import type { RouteDoc } from './openapi.describe.js';
import { openApiDocument } from './openapi.document.js';
import { ROUTE_EXAMPLES } from './openapi.examples.js';
import { policiesRouteDocs } from './policies.routes.js';
import { serviceIndexRouteDocs } from './service-index.routes.js';

export const openApiRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApi',
    summary: 'This document (OpenAPI 3.1.0)',
    tags: ['discovery'],
    auth: 'none',
    responses: { 200: { description: 'The OpenAPI document', contentType: 'application/json', text: true } },
  },
];

/**
 * Every documented route: the edge's own lists here, then each context's (contexts/<name>/index.ts, gathered in
 * contexts.ts). A route missing here is missing from /openapi.json.
 */
export const ROUTE_DOCS: readonly RouteDoc[] = [
  ...mcpRouteDocs,
  ...discoveryRouteDocs,
  ...openApiRouteDocs,
  ...asyncApiRouteDocs,
  ...policiesRouteDocs,
  ...serviceIndexRouteDocs,
  ...CONTEXT_ROUTE_DOCS,
];

/** The document GET /openapi.json serves: ROUTE_DOCS with their examples (openapi.examples.ts). */
export const marketplaceOpenApi = (publicBaseUrl: string) =>
  openApiDocument(ROUTE_DOCS, publicBaseUrl, ROUTE_EXAMPLES);

/** GET /openapi.json, generated once at start-up from ROUTE_DOCS. */
export const openApiRoutes = (problems: Problems, publicBaseUrl: string): Router => {
  const body = JSON.stringify(marketplaceOpenApi(publicBaseUrl));
  const router = Router();
  router
    .route('/openapi.json')
    .get((_req, res) => sendDocument(res, 'application/json', body, DISCOVERY_CACHE_CONTROL))
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};
