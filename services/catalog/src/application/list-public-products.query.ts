import { z } from 'zod';
import type { CatalogProduct } from '../domain/catalog-product.js';
import type { ProductWithSeller, SellerLookup } from './get-product.query.js';
import { parseInput } from './validate-input.js';

/** docs/specification.md, "Limits": feed pages hold up to 200 items. */
export const MAX_PUBLIC_PAGE = 200;

export interface ListPublicProductsInput {
  /** '' for the first page, else the `nextCursor` of the previous one. */
  readonly cursor: string;
  readonly limit: number;
}

export interface PublicProductPage {
  readonly products: readonly CatalogProduct[];
  /** '' on the last page. */
  readonly nextCursor: string;
}

/** The public products numbered above `afterNumber`, product number ascending, at most `limit`. */
export type PublicProductPager = (afterNumber: number, limit: number) => Promise<CatalogProduct[]>;

// The cursor is the number of the last product sent: stable under inserts (new listings get higher numbers)
// and under updates, so a crawler never sees a listing twice or skips one that existed when it started.
const listPublicProductsSchema = z.object({
  cursor: z.union([
    z.literal(''),
    z.string().regex(/^[1-9][0-9]{0,15}$/, 'must be a cursor from a previous page'),
  ]),
  limit: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(MAX_PUBLIC_PAGE, `must be at most ${MAX_PUBLIC_PAGE}`),
});

const numberOf = (productId: string): number => Number(productId.slice('product_'.length));

/** ListPublicProducts: one page of every public listing, in stock or not (the ACP feed and the sitemap). */
export const listPublicProducts = async (
  page: PublicProductPager,
  input: ListPublicProductsInput,
): Promise<PublicProductPage> => {
  const { cursor, limit } = parseInput(listPublicProductsSchema, input, 'page request');
  // One more than asked says whether another page follows, so the last page never points at an empty one.
  const products = await page(cursor === '' ? 0 : Number(cursor), limit + 1);
  const more = products.length > limit;
  const sent = more ? products.slice(0, limit) : products;
  return { products: sent, nextCursor: more ? String(numberOf(sent.at(-1)!.id)) : '' };
};

/** A feed page whose products carry their sellers' public profiles, as GetProduct's do. */
export interface PublicProductPageWithSellers {
  readonly products: readonly ProductWithSeller[];
  readonly nextCursor: string;
}

/** listPublicProducts with each seller looked up once per page, so the feed names sellers as product pages do. */
export const listPublicProductsWithSellers = async (
  page: PublicProductPager,
  sellers: SellerLookup,
  input: ListPublicProductsInput,
): Promise<PublicProductPageWithSellers> => {
  const { products, nextCursor } = await listPublicProducts(page, input);
  const ids = [...new Set(products.map((product) => product.sellerAccountId))];
  const profiles = new Map(await Promise.all(ids.map(async (id) => [id, await sellers(id)] as const)));
  return {
    products: products.map((product) => {
      const seller = profiles.get(product.sellerAccountId);
      return seller === undefined ? { product } : { product, seller };
    }),
    nextCursor,
  };
};
