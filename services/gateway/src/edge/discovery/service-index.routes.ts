import { Router } from 'express';
import { z } from 'zod';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { Problems } from '../http/problem.js';
import type { RouteDoc } from './openapi.describe.js';
import { UCP_SHOPPING_PATH } from '../ucp.js';

/**
 * The base URLs the discovery documents name (ACP `api_base_url`, the UCP REST service's `endpoint`) answer with
 * where to go next, so every URL they list answers (docs/agents.md, "Documents").
 */
export const serviceIndexOf = (publicBaseUrl: string) => ({
  name: 'Liquidation Marketplace',
  llms_txt: `${publicBaseUrl}/llms.txt`,
  openapi: `${publicBaseUrl}/openapi.json`,
  mcp: `${publicBaseUrl}/mcp`,
  mcp_tools: `${publicBaseUrl}/api/mcp/schema.json`,
  ucp_profile: `${publicBaseUrl}/.well-known/ucp`,
  acp_discovery: `${publicBaseUrl}/.well-known/acp.json`,
  product_feed: `${publicBaseUrl}/acp/feed.json`,
  catalog: `${publicBaseUrl}/api/ucp/catalog/products`,
});

export const serviceIndexRoutes = (problems: Problems, publicBaseUrl: string): Router => {
  const router = Router();
  const index = serviceIndexOf(publicBaseUrl);
  for (const path of ['/', '/api/ucp', UCP_SHOPPING_PATH, '/api/acp']) {
    router
      .route(path)
      .get((_req, res) => {
        res.set('Cache-Control', 'public, max-age=300').json(index);
      })
      .all(methodNotAllowed(problems, ['GET']));
  }
  return router;
};

const indexResponse = {
  200: {
    description: 'Links to the agent-facing documents and APIs',
    schema: z.record(z.string(), z.string()).describe('service index'),
  },
};

export const serviceIndexRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/',
    operationId: 'getServiceIndex',
    summary: 'Links to the documents and APIs',
    tags: ['discovery'],
    auth: 'none',
    responses: indexResponse,
  },
  {
    method: 'get',
    path: '/api/acp',
    operationId: 'getAcpServiceIndex',
    summary: 'Links to the documents and APIs (the ACP api_base_url; the checkout is at /checkout_sessions)',
    tags: ['discovery'],
    auth: 'none',
    responses: indexResponse,
  },
  {
    method: 'get',
    path: '/api/ucp',
    operationId: 'getUcpServiceIndex',
    summary: 'Links to the documents and APIs (the endpoint of our own UCP REST service)',
    tags: ['discovery'],
    auth: 'none',
    responses: indexResponse,
  },
  {
    method: 'get',
    path: UCP_SHOPPING_PATH,
    operationId: 'getUcpShoppingServiceIndex',
    summary:
      'Links to the documents and APIs (the endpoint of the dev.ucp.shopping REST service: /checkout-sessions, /catalog/…)',
    tags: ['discovery'],
    auth: 'none',
    responses: indexResponse,
  },
];
