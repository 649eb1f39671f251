import { z } from 'zod';
import type { Tool } from '../../edge/mcp/tool.js';
import type { CatalogQueries } from './catalog.queries.js';
import {
  ucpCatalogOperations,
  ucpGetProductRequestSchema,
  ucpGetProductResponseOutput,
  ucpLookupRequestSchema,
  ucpLookupResponseOutput,
  ucpSearchRequestSchema,
  ucpSearchResponseOutput,
} from './ucp-catalog.js';

/**
 * UCP's catalog MCP binding (docs/protocols.md §2.2, §2.4): `search_catalog`, `lookup_catalog`, `get_product`,
 * the request under `catalog`, the UCP answer as structured content. `meta` (`ucp-agent`, the platform's
 * profile) is accepted and not read, as over REST (docs/agents.md, "Protocols").
 */
const meta = z
  .looseObject({}, { error: 'must be an object (ucp-agent: {profile})' })
  .optional()
  .describe('UCP request metadata ({"ucp-agent": {"profile": "<url>"}}); accepted, not read');

const ucpTool = <S extends z.ZodType>(request: S) =>
  // `catalog` first: the tool's first argument is the one that matters.
  z.object({ catalog: request, meta });

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const UCP_AGENT = { 'ucp-agent': { profile: 'https://agent.example/profiles/shopping-agent.json' } };

/** Typical requests (the tools' `catalog` argument); /openapi.json uses them as the REST bodies. */
export const UCP_CATALOG_EXAMPLES = {
  search: {
    query: 'cordless drill',
    filters: { categories: ['tools'], price: { max: 5000 } },
    pagination: { limit: 10 },
  },
  lookup: { ids: ['product_12', 'product_40'] },
  product: { id: 'product_12' },
} as const;

export const ucpCatalogTools = (catalog: CatalogQueries, publicBaseUrl: string): Tool[] => {
  const operations = ucpCatalogOperations(catalog, publicBaseUrl);
  const searchCatalog: Tool<ReturnType<typeof ucpTool<typeof ucpSearchRequestSchema>>> = {
    name: 'search_catalog',
    description:
      'UCP catalog search (dev.ucp.shopping.catalog.search, UCP 2026-04-08): catalog.query (all words must ' +
      'match), catalog.filters {categories: [one category id], price: {min, max} cents, condition}, ' +
      'catalog.pagination {cursor, limit}. The same search as search_inventory in UCP shapes: each lot a product ' +
      'with one variant (its id is the product id, as checkout item.id).',
    inputSchema: ucpTool(ucpSearchRequestSchema),
    outputSchema: ucpSearchResponseOutput,
    auth: 'none',
    annotations: READ_ONLY,
    examples: [{ catalog: UCP_CATALOG_EXAMPLES.search, meta: UCP_AGENT }],
    handler: (_principal, input) => operations.search(input.catalog),
  };
  const lookupCatalog: Tool<ReturnType<typeof ucpTool<typeof ucpLookupRequestSchema>>> = {
    name: 'lookup_catalog',
    description:
      'UCP catalog lookup (dev.ucp.shopping.catalog.lookup): catalog.ids, 1 to 50 product ids; each public lot ' +
      'once, its variant with inputs [{id, match}], and an info message not_found per other id.',
    inputSchema: ucpTool(ucpLookupRequestSchema),
    outputSchema: ucpLookupResponseOutput,
    auth: 'none',
    annotations: READ_ONLY,
    examples: [{ catalog: UCP_CATALOG_EXAMPLES.lookup, meta: UCP_AGENT }],
    handler: (_principal, input) => operations.lookup(input.catalog),
  };
  const getProduct: Tool<ReturnType<typeof ucpTool<typeof ucpGetProductRequestSchema>>> = {
    name: 'get_product',
    description:
      'UCP product detail (dev.ucp.shopping.catalog.lookup): catalog.id, a product id. An unknown id answers ' +
      'ucp.status error with a not_found message (not a tool error), as UCP specifies.',
    inputSchema: ucpTool(ucpGetProductRequestSchema),
    outputSchema: ucpGetProductResponseOutput,
    auth: 'none',
    annotations: READ_ONLY,
    examples: [{ catalog: UCP_CATALOG_EXAMPLES.product, meta: UCP_AGENT }],
    handler: (_principal, input) => operations.getProduct(input.catalog),
  };
  return [searchCatalog, lookupCatalog, getProduct] as Tool[];
};
