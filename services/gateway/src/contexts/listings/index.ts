import type { Principal } from '../../edge/account.js';
import type { ContextSurface, EdgeServices } from '../../edge/context.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import type { ListingClient } from './listing.client.js';
import { ListingCommands } from './listing.commands.js';
import { listingTools } from './listing.tools.js';
import { productsRouteDocs, productsRoutes } from './products.routes.js';
import type { ListingImports } from './imports.routes.js';
import { importsRouteDocs, importsRoutes } from './imports.routes.js';
import { SELLER_LISTINGS_MAX_LIMIT } from './seller-listings.schema.js';

export const routeDocs: readonly RouteDoc[] = [...importsRouteDocs, ...productsRouteDocs];

/** A seller's listings over the listing service: create, read back, update, bulk changes. */
export const listingsContext = (
  edge: EdgeServices,
  client: ListingClient,
  imports?: ListingImports,
): ContextSurface & {
  readonly commands: ListingCommands;
  /** A seller's own product ids (one page of its listings), for completion/complete; none for anyone else. */
  readonly ownProductIds: (principal: Principal) => Promise<string[]>;
} => {
  const commands = new ListingCommands(client, edge.views);
  return {
    commands,
    ownProductIds: async (principal) => {
      if (principal.role !== 'seller') return [];
      const { listings } = await commands.listMine(principal, { limit: SELLER_LISTINGS_MAX_LIMIT });
      return listings.map((listing) => listing.id);
    },
    // Imports first: /api/products/imports would otherwise be taken for a product id.
    routes: [
      importsRoutes(edge.problems, edge.identity, imports, edge.publicBaseUrl),
      productsRoutes(edge.problems, commands, edge.identity, edge.bodyLimitBytes),
    ],
    tools: listingTools(commands),
  };
};
