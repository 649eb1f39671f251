import type { CatalogQueries } from '../application/catalog.queries.js';
import type { FixedResource, TemplatedResource } from './resources.js';
import { McpResources } from './resources.js';

/** Where the resources of spec 4.3 read from; each area adds its source as it lands. */
export interface ResourceSources {
  readonly catalog: CatalogQueries;
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
  const templated: TemplatedResource[] = [];
  return new McpResources(fixed, templated);
};
