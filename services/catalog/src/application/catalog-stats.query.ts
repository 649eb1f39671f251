import { CATEGORIES, CONDITIONS } from '@marketplace/vocabulary';

export interface StatsCount {
  readonly id: string;
  readonly publicProducts: number;
  readonly publicInStockProducts: number;
}

export interface CatalogStats {
  readonly publicProducts: number;
  readonly publicInStockProducts: number;
  /** Every category of the vocabulary, in its order, zero counts included. */
  readonly byCategory: readonly StatsCount[];
  /** Every condition of the vocabulary, in its order, zero counts included. */
  readonly byCondition: readonly StatsCount[];
}

/** How many public products one (category, condition) holds, and how many of them are in stock. */
export interface PublicProductCount {
  readonly category: string;
  readonly condition: string;
  readonly products: number;
  readonly inStock: number;
}

/** Public products per (category, condition) present. */
export type PublicProductCounter = () => Promise<readonly PublicProductCount[]>;

const totalsBy = (
  ids: readonly string[],
  counts: readonly PublicProductCount[],
  keyOf: (count: PublicProductCount) => string,
): StatsCount[] =>
  ids.map((id) => {
    const matching = counts.filter((count) => keyOf(count) === id);
    return {
      id,
      publicProducts: matching.reduce((sum, count) => sum + count.products, 0),
      publicInStockProducts: matching.reduce((sum, count) => sum + count.inStock, 0),
    };
  });

/** GetCatalogStats: the totals and their split by category and by condition, from one grouped count. */
export const catalogStats = async (count: PublicProductCounter): Promise<CatalogStats> => {
  const counts = await count();
  return {
    publicProducts: counts.reduce((sum, row) => sum + row.products, 0),
    publicInStockProducts: counts.reduce((sum, row) => sum + row.inStock, 0),
    byCategory: totalsBy(CATEGORIES, counts, (row) => row.category),
    // A listing without a condition counts in the totals and its category, under no condition.
    byCondition: totalsBy(CONDITIONS, counts, (row) => row.condition),
  };
};
