import { z } from 'zod';
import { semanticSearchFields } from './catalog-semantic-search.schema.js';
import type { CatalogQueries, SemanticProductMatches } from './catalog.queries.js';
import { productSummaryOutput } from '../../edge/product.views.js';
import type { Tool } from '../../edge/mcp/tool.js';

/** search_inventory_semantic (docs/specification.md, "MCP tools"): the fields and limits of POST /api/ucp/catalog/search. */
export const searchInventorySemanticInput = z.object(semanticSearchFields);

export const semanticMatchesOutput = z.object({
  products: z.array(
    productSummaryOutput.extend({
      similarity: z
        .number()
        .min(0)
        .max(1)
        .describe('cosine similarity of query and listing, 1 = same meaning'),
    }),
  ),
});

/** Typical arguments of search_inventory_semantic; /openapi.json reuses them where a route takes the same fields. */
export const SEARCH_INVENTORY_SEMANTIC_EXAMPLES = [
  { query: 'laptops for a school computer lab', category: 'electronics', max_price: 30000, limit: 10 },
];

export const searchInventorySemanticTool = (
  catalog: CatalogQueries,
): Tool<typeof searchInventorySemanticInput, SemanticProductMatches> => ({
  name: 'search_inventory_semantic',
  examples: SEARCH_INVENTORY_SEMANTIC_EXAMPLES,
  description:
    'Find public liquidation lots by meaning rather than exact words ("used laptops for a school"): the ' +
    'nearest listings first, each with a similarity in [0, 1]; category, condition and maximum unit price ' +
    '(cents) filter those nearest candidates. Fails when the marketplace runs without an embedding provider.',
  inputSchema: searchInventorySemanticInput,
  outputSchema: semanticMatchesOutput,
  auth: 'none',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (_principal, input) =>
    catalog.semanticSearch({
      query: input.query,
      category: input.category,
      condition: input.condition,
      maxPriceCents: input.max_price,
      limit: input.limit,
    }),
});
