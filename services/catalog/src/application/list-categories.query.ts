import { CATEGORIES } from '@marketplace/vocabulary';

export interface CategoryCount {
  readonly id: string;
  /** Publicly promoted, in-stock listings of the category (docs/specification.md, "Listings"). */
  readonly productCount: number;
}

/** Public, in-stock listings per category id; categories without any may be absent. */
export type CategoryCounter = () => Promise<ReadonlyMap<string, number>>;

/** ListCategories: every category of the vocabulary, in its order, with its count (zero included). */
export const listCategories = async (count: CategoryCounter): Promise<CategoryCount[]> => {
  const counts = await count();
  return CATEGORIES.map((id) => ({ id, productCount: counts.get(id) ?? 0 }));
};
