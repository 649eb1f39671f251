import type { Principal } from './account.js';
import type { ContextSurface, EdgeServices } from './context.js';
import type { ListingImports } from '../contexts/listings/imports.routes.js';
import type { RouteDoc } from './discovery/openapi.describe.js';
import * as catalog from '../contexts/catalog/index.js';
import type { CatalogClient } from '../contexts/catalog/catalog.client.js';
import * as identity from '../contexts/identity/index.js';
import * as listings from '../contexts/listings/index.js';
import type { ListingClient } from '../contexts/listings/listing.client.js';
import * as orders from '../contexts/orders/index.js';
import type { OrderClient } from '../contexts/orders/order.client.js';
import { pendingQuotesVia } from '../contexts/orders/order.operations.js';
import * as quotes from '../contexts/quotes/index.js';
import type { QuoteClient } from '../contexts/quotes/quote.client.js';
import * as subscriptions from '../contexts/subscriptions/index.js';
import type { SubscriptionClient } from '../contexts/subscriptions/subscription.client.js';

/**
 * The one list of the gateway's contexts (docs/architecture.md, "Gateway"). Each context exports its route docs,
 * and a function that builds its routes and tools from the edge's services and its backend's client; this file
 * wires the few things one context lends another, so that contexts never import each other.
 */
export const CONTEXT_ROUTE_DOCS: readonly RouteDoc[] = [
  ...catalog.routeDocs,
  ...listings.routeDocs,
  ...quotes.routeDocs,
  ...orders.routeDocs,
  ...subscriptions.routeDocs,
  ...identity.routeDocs,
];

/** A gRPC client per backend service: every one is required. */
export interface BackendClients {
  readonly listing: ListingClient;
  readonly catalog: CatalogClient;
  readonly subscription: SubscriptionClient;
  readonly order: OrderClient;
  readonly quote: QuoteClient;
}

export interface OpenedContexts {
  /** In the order their routes are mounted and their tools listed. */
  readonly surfaces: readonly ContextSurface[];
  /** What the MCP resources and completions read (mcp/marketplace.resources.ts, mcp/completions.ts). */
  readonly catalog: catalog.CatalogContext;
  readonly subscriptions: subscriptions.SubscriptionsContext;
  readonly ownQuoteRequestIds: (principal: Principal) => Promise<string[]>;
  readonly ownProductIds: (principal: Principal) => Promise<string[]>;
  readonly quoteRequestsSince: (sinceMs: number) => Promise<number>;
}

export const openContexts = (
  edge: EdgeServices,
  clients: BackendClients,
  options: { readonly confirmationKey: Buffer; readonly listingImports?: ListingImports | undefined },
): OpenedContexts => {
  const catalogContext = catalog.catalogContext(edge, clients.catalog);
  const quotesContext = quotes.quotesContext(edge, clients.quote);
  const ordersContext = orders.ordersContext(edge, clients.order, {
    pendingQuotes: pendingQuotesVia((request) => clients.quote.listQuoteRequests(request)),
    agreedQuotes: quotesContext.requests,
    confirmationKey: options.confirmationKey,
  });
  const subscriptionsContext = subscriptions.subscriptionsContext(edge, clients.subscription);
  const listingsContext = listings.listingsContext(edge, clients.listing, options.listingImports);
  return {
    surfaces: [
      catalogContext,
      listingsContext,
      quotesContext,
      ordersContext,
      subscriptionsContext,
      identity.identityContext(edge),
    ],
    catalog: catalogContext,
    subscriptions: subscriptionsContext,
    ownQuoteRequestIds: quotesContext.ownRequestIds,
    ownProductIds: listingsContext.ownProductIds,
    quoteRequestsSince: (sinceMs) => clients.quote.countQuoteRequestsSince(sinceMs),
  };
};
