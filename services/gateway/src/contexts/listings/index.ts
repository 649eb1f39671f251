import type { ContextSurface, EdgeServices } from '../../edge/context.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import type { ListingClient } from './listing.client.js';
import { ListingCommands } from './listing.commands.js';
import { listingTools } from './listing.tools.js';
import { productsRouteDocs, productsRoutes } from './products.routes.js';

export const routeDocs: readonly RouteDoc[] = [...productsRouteDocs];

/** A seller's listings over the listing service: create, read back, update, bulk changes. */
export const listingsContext = (
  edge: EdgeServices,
  client: ListingClient,
): ContextSurface & { readonly commands: ListingCommands } => {
  const commands = new ListingCommands(client, edge.views);
  return {
    commands,
    routes: [productsRoutes(edge.problems, commands, edge.identity, edge.bodyLimitBytes)],
    tools: listingTools(commands),
  };
};
