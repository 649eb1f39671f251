import type { ContextSurface, EdgeServices } from '../../edge/context.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import type { CatalogClient } from './catalog.client.js';
import { CatalogQueries } from './catalog.queries.js';
import { catalogRouteDocs, catalogRoutes } from './catalog.routes.js';
import { searchInventorySemanticTool } from './catalog-semantic.tools.js';
import { getPricingRecommendationTool, getProductDetailsTool, searchInventoryTool } from './catalog.tools.js';
import { feedRouteDocs, feedRoutes } from './feed.routes.js';
import { markdownRouteDocs, markdownRoutes } from './markdown.routes.js';
import { sitemapRouteDocs, sitemapRoutes } from './sitemap.routes.js';
import { ucpCatalogRouteDocs, ucpCatalogRoutes } from './ucp-catalog.routes.js';
import { ucpCatalogTools } from './ucp-catalog.tools.js';

/** The catalog's documented routes: search and details, the feed, sitemap and markdown pages of agents, UCP's catalog. */
export const routeDocs: readonly RouteDoc[] = [
  ...catalogRouteDocs,
  ...feedRouteDocs,
  ...sitemapRouteDocs,
  ...markdownRouteDocs,
  ...ucpCatalogRouteDocs,
];

export interface CatalogContext extends ContextSurface {
  readonly queries: CatalogQueries;
}

/** The catalog: public search and product details over the catalog service, for REST, crawlers and MCP. */
export const catalogContext = (edge: EdgeServices, client: CatalogClient): CatalogContext => {
  const { problems, publicBaseUrl } = edge;
  const queries = new CatalogQueries(client, edge.views);
  return {
    queries,
    routes: [
      catalogRoutes(problems, queries, edge.identity),
      feedRoutes(problems, queries, publicBaseUrl),
      sitemapRoutes(problems, queries, publicBaseUrl),
      markdownRoutes(problems, queries, publicBaseUrl),
      ucpCatalogRoutes(problems, queries, publicBaseUrl),
    ],
    tools: [
      searchInventoryTool(queries),
      getProductDetailsTool(queries),
      getPricingRecommendationTool(queries),
      searchInventorySemanticTool(queries),
      ...ucpCatalogTools(queries, publicBaseUrl),
    ],
  };
};
