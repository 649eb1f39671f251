import type { CatalogQueries } from '../../contexts/catalog/catalog.queries.js';
import { searchInventorySemanticTool } from '../../contexts/catalog/catalog-semantic.tools.js';
import {
  getPricingRecommendationTool,
  getProductDetailsTool,
  searchInventoryTool,
} from '../../contexts/catalog/catalog.tools.js';
import { rotateWebhookSecretTool } from '../../contexts/subscriptions/subscription-secret.tools.js';
import { subscribeToQueryTool } from '../../contexts/subscriptions/subscription.tools.js';
import type { OrderOperations } from '../../contexts/orders/order.operations.js';
import { orderTools } from '../../contexts/orders/order.tools.js';
import type { ListingCommands } from '../../contexts/listings/listing.commands.js';
import { listingTools } from '../../contexts/listings/listing.tools.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { QuoteRequests } from '../../contexts/quotes/quote.requests.js';
import { quoteTools } from '../../contexts/quotes/quote.tools.js';
import type { QuotePurchases } from '../../contexts/quotes/quote-purchases.js';
import { acceptQuoteAndPayTool } from '../../contexts/quotes/quote-purchase.tools.js';
import type { Tool } from './tool.js';
import type { CheckoutConfirmations } from '../../contexts/orders/checkout-confirmations.js';
import { checkoutConfirmationTools } from '../../contexts/orders/checkout-confirmation.tools.js';
import type { SubscriptionCommands } from '../../contexts/subscriptions/subscription.commands.js';

/**
 * The application services the tools call. Each area adds its service here (one field, additive) when it adds
 * its tools below; app.ts builds this object once from the same services the REST routes use.
 */
export interface ToolDependencies {
  readonly catalog: CatalogQueries;
  /** Absent when the gateway runs without the subscription service; subscribe_to_query counts against `limiter`. */
  readonly subscriptions?:
    { readonly commands: SubscriptionCommands; readonly limiter: RateLimiter } | undefined;
  /** Absent when the gateway runs without the order service. */
  readonly orders?: OrderOperations | undefined;
  /** The seller's listing commands (create_listing, bulk_update_listings). */
  readonly listings?: ListingCommands | undefined;
  /** Absent when the gateway runs without the quote service; request_quote counts against `limiter`. */
  readonly quotes?: { readonly requests: QuoteRequests; readonly limiter: RateLimiter } | undefined;
  /** Absent unless both the quote and the order services are there. */
  readonly quotePurchases?: QuotePurchases | undefined;
  /** preview_checkout and confirm_purchase; absent without the order service. */
  readonly confirmations?: CheckoutConfirmations | undefined;
}

/**
 * Every agent-facing tool of docs/specification.md, "MCP tools", defined once. The transports (/mcp, /api/mcp/streamable,
 * /api/mcp/invoke, /api/mcp/stream) and the documents (/api/mcp/schema.json) all read this one list, so a tool
 * added here appears everywhere with the same schemas, auth and annotations.
 */
export interface ToolRegistry {
  /** In a stable order (the order of the list below): clients may cache tools/list. */
  readonly tools: readonly Tool[];
  find(name: string): Tool | undefined;
}

export const createToolRegistry = (deps: ToolDependencies): ToolRegistry =>
  registryOf([
    // catalog
    searchInventoryTool(deps.catalog),
    getProductDetailsTool(deps.catalog),
    getPricingRecommendationTool(deps.catalog),
    searchInventorySemanticTool(deps.catalog),
    // saved searches
    ...(deps.subscriptions
      ? [
          subscribeToQueryTool(deps.subscriptions.commands, deps.subscriptions.limiter),
          rotateWebhookSecretTool(deps.subscriptions.commands),
        ]
      : []),
    // checkout, orders and fulfilment
    ...(deps.orders ? orderTools(deps.orders) : []),
    // listings
    ...(deps.listings ? listingTools(deps.listings) : []),
    // quote requests
    ...(deps.quotes ? quoteTools(deps.quotes.requests, deps.quotes.limiter) : []),
    ...(deps.quotePurchases ? [acceptQuoteAndPayTool(deps.quotePurchases)] : []),
    ...(deps.confirmations ? checkoutConfirmationTools(deps.confirmations) : []),
  ]);

/** A registry of these tools; a name used twice is a programming error caught at start-up. */
export const registryOf = (tools: readonly Tool[]): ToolRegistry => {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    byName.set(tool.name, tool);
  }
  return { tools, find: (name) => byName.get(name) };
};
