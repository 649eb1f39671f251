import { Router } from 'express';
import { mcpRouteDocs } from '../../mcp/mcp.routes.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import type { Problems } from '../problem.js';
import { asyncApiRouteDocs } from './asyncapi.routes.js';
import { catalogRouteDocs } from './catalog.routes.js';
import { DISCOVERY_CACHE_CONTROL, discoveryRouteDocs, sendDocument } from './discovery.routes.js';
import type { RouteDoc } from './openapi.describe.js';
import { openApiDocument } from './openapi.document.js';
import { feedRouteDocs } from './feed.routes.js';
import { markdownRouteDocs } from './markdown.routes.js';
import { policiesRouteDocs } from './policies.routes.js';
import { serviceIndexRouteDocs } from './service-index.routes.js';
import { sitemapRouteDocs } from './sitemap.routes.js';
import { quotesRouteDocs } from './quotes.routes.js';
import { checkoutRouteDocs } from './checkout.routes.js';
import { checkoutConfirmationRouteDocs } from './checkout-confirmation.routes.js';
import { ordersRouteDocs } from './orders.routes.js';
import { sellerOrdersRouteDocs } from './seller-orders.routes.js';
import { productsRouteDocs } from './products.routes.js';
import { agentTokensRouteDocs } from './agent-tokens.routes.js';
import { subscriptionsRouteDocs } from './subscriptions.routes.js';
import { emailConfirmationRouteDocs } from './email-confirmation.routes.js';
import { sellerWebhooksRouteDocs } from './seller-webhooks.routes.js';

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
 * Every documented route: each routes file exports its `<name>RouteDocs` list, and this is the one place that
 * gathers them. A route missing here is missing from /openapi.json.
 */
export const ROUTE_DOCS: readonly RouteDoc[] = [
  ...catalogRouteDocs,
  ...mcpRouteDocs,
  ...discoveryRouteDocs,
  ...openApiRouteDocs,
  ...asyncApiRouteDocs,
  ...feedRouteDocs,
  ...sitemapRouteDocs,
  ...markdownRouteDocs,
  ...policiesRouteDocs,
  ...serviceIndexRouteDocs,
  ...quotesRouteDocs,
  ...checkoutRouteDocs,
  ...checkoutConfirmationRouteDocs,
  ...ordersRouteDocs,
  ...sellerOrdersRouteDocs,
  ...productsRouteDocs,
  ...agentTokensRouteDocs,
  ...subscriptionsRouteDocs,
  ...emailConfirmationRouteDocs,
  ...sellerWebhooksRouteDocs,
];

/** GET /openapi.json, generated once at start-up from ROUTE_DOCS. */
export const openApiRoutes = (problems: Problems, publicBaseUrl: string): Router => {
  const body = JSON.stringify(openApiDocument(ROUTE_DOCS, publicBaseUrl));
  const router = Router();
  router
    .route('/openapi.json')
    .get((_req, res) => sendDocument(res, 'application/json', body, DISCOVERY_CACHE_CONTROL))
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};
