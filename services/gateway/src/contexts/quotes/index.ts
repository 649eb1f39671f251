import type { Principal } from '../../edge/account.js';
import type { ContextSurface, EdgeServices } from '../../edge/context.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { QUOTE_LIMITS } from '@marketplace/vocabulary';
import type { QuoteClient } from './quote.client.js';
import { QuoteRequests } from './quote.requests.js';
import { quoteTools } from './quote.tools.js';
import { quotesRouteDocs, quotesRoutes } from './quotes.routes.js';

export const routeDocs: readonly RouteDoc[] = [...quotesRouteDocs];

/** Quote requests and their negotiation over the quote service (an agreed quote is bought in the orders context). */
export const quotesContext = (
  edge: EdgeServices,
  client: QuoteClient,
): ContextSurface & {
  readonly requests: QuoteRequests;
  /** The caller's own quote request ids, for completion/complete: a buyer's requests, or those a seller received. */
  readonly ownRequestIds: (principal: Principal) => Promise<string[]>;
} => {
  const requests = new QuoteRequests(client, edge.identity);
  return {
    requests,
    ownRequestIds: async (principal) => {
      const { quote_requests: found } =
        principal.role === 'seller'
          ? await requests.list(principal, 'all', QUOTE_LIMITS.maxListLimit)
          : await requests.listMine(principal, {
              status: 'all',
              limit: QUOTE_LIMITS.maxListLimit,
              offset: 0,
            });
      return found.map((request) => String(request.quote_request_id));
    },
    routes: [quotesRoutes(edge.problems, requests, edge.identity, edge.rateLimiter)],
    tools: quoteTools(requests, edge.rateLimiter),
  };
};
