import type { CatalogQueries } from '../../contexts/catalog/catalog.queries.js';
import type { SubscriptionCommands } from '../../contexts/subscriptions/subscription.commands.js';
import type { FixedResource, TemplatedResource } from './resources.js';
import { McpResources } from './resources.js';

/** Where the resources of docs/specification.md, "MCP tools" read from (wired by app.ts from the contexts). */
export interface ResourceSources {
  readonly catalog: CatalogQueries;
  readonly subscriptions: SubscriptionCommands;
  /** Quote requests filed since a time (CountQuoteRequestsSince). */
  readonly quoteRequestsSince: (sinceMs: number) => Promise<number>;
  /** Orders placed since a time; absent until the order client has CountOrdersSince (docs/agents.md). */
  readonly ordersSince?: ((sinceMs: number) => Promise<number>) | undefined;
  /** Default: the system clock. */
  readonly now?: (() => number) | undefined;
}

const DAY_MS = 24 * 60 * 60 * 1_000;

/** marketplace://stats: public listings by category and condition, and the last 24 hours' activity. */
export const marketplaceStats = async (sources: ResourceSources) => {
  const now = (sources.now ?? Date.now)();
  const since = now - DAY_MS;
  // null: not counted (orders, until the order client has CountOrdersSince; docs/agents.md).
  const countSince = (count: ((sinceMs: number) => Promise<number>) | undefined) =>
    count ? count(since) : Promise.resolve(null);
  const [listings, quoteRequests, orders] = await Promise.all([
    sources.catalog.statistics(),
    countSince(sources.quoteRequestsSince),
    countSince(sources.ordersSince),
  ]);
  return {
    generated_at: new Date(now).toISOString(),
    listings,
    last_24_hours: { since: new Date(since).toISOString(), quote_requests: quoteRequests, orders },
  };
};

export const marketplaceResources = (sources: ResourceSources): McpResources => {
  const categories: FixedResource = {
    uri: 'marketplace://categories',
    name: 'categories',
    title: 'Categories',
    description:
      'Every listing category (the values search_inventory and create_listing accept) with its number of ' +
      'public, in-stock listings: {categories: [{id, name, product_count}]}.',
    read: () => sources.catalog.categories(),
  };
  const stats: FixedResource = {
    uri: 'marketplace://stats',
    name: 'stats',
    title: 'Marketplace statistics',
    description:
      'Public listings (in stock or not) counted by category and by condition, and the quote requests and ' +
      'orders of the last 24 hours: {generated_at, listings: {public_products, public_in_stock_products, ' +
      'by_category, by_condition}, last_24_hours: {since, quote_requests, orders}}.',
    read: () => marketplaceStats(sources),
  };
  const fixed: FixedResource[] = [stats, categories];
  const { subscriptions } = sources;
  const templated: TemplatedResource[] = [
    {
      uriTemplate: 'marketplace://subscriptions/{id}',
      name: 'saved_search_subscription',
      title: 'Saved-search subscription',
      description:
        'A subscription created by subscribe_to_query, for its owner only: the query, the channels, the last ' +
        '100 matches (newest first) and the state of every webhook and email delivery, failures included.',
      read: (principal, id) => subscriptions.resource(principal, id),
      // resources/subscribe in an MCP session: notifications/resources/updated when a listing matches.
      checkSubscribable: (principal, id) => subscriptions.checkWatchable(principal, id),
    },
  ];
  return new McpResources(fixed, templated);
};
