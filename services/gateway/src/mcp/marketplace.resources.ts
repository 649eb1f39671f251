import type { CatalogQueries } from '../application/catalog.queries.js';
import type { SubscriptionCommands } from '../application/subscription.commands.js';
import type { FixedResource, TemplatedResource } from './resources.js';
import { McpResources } from './resources.js';

/** Where the resources of spec 4.3 read from; each area adds its source as it lands. */
export interface ResourceSources {
  readonly catalog: CatalogQueries;
  /** Absent when the gateway runs without the subscription service. */
  readonly subscriptions?: SubscriptionCommands | undefined;
}

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
  const fixed: FixedResource[] = [categories];
  const { subscriptions } = sources;
  const templated: TemplatedResource[] = subscriptions
    ? [
        {
          uriTemplate: 'marketplace://subscriptions/{id}',
          name: 'saved_search_subscription',
          title: 'Saved-search subscription',
          description:
            'A subscription created by subscribe_to_query, for its owner only: the query, the channels, the last ' +
            '100 matches (newest first) and the state of every webhook and email delivery, failures included.',
          read: (principal, id) => subscriptions.resource(principal, id),
        },
      ]
    : [];
  return new McpResources(fixed, templated);
};
