import { notFound, parseProductId, validationError } from '@marketplace/platform';
import type { CatalogProduct } from '../domain/catalog-product.js';
import { isVisibleTo } from '../domain/product-visibility.js';
import type { Viewer } from '../domain/product-visibility.js';
import type { SellerProfile } from '../domain/seller-profile.js';

export interface GetProductInput {
  readonly productId: string;
  readonly viewer: Viewer;
}

/** Reads one product of the catalog's read model, or undefined. */
export type ProductLookup = (productId: string) => Promise<CatalogProduct | undefined>;

/**
 * GetProduct: the product if the viewer may see it. A listing hidden from the viewer is reported exactly like
 * one that does not exist, so its existence does not leak.
 */
export const getProduct = async (
  lookup: ProductLookup,
  { productId, viewer }: GetProductInput,
): Promise<CatalogProduct> => {
  if (parseProductId(productId) === undefined) {
    throw validationError(`invalid product id: ${JSON.stringify(productId.slice(0, 64))}`, [
      { path: 'productId', message: 'must look like product_<number>' },
    ]);
  }
  const product = await lookup(productId);
  if (product === undefined || !isVisibleTo(product, viewer))
    throw notFound(`product ${productId} not found`);
  return product;
};

/** Reads a seller's public profile, or undefined while the catalog has not seen the account. */
export type SellerLookup = (accountId: number) => Promise<SellerProfile | undefined>;

export interface ProductWithSeller {
  readonly product: CatalogProduct;
  /** Absent until the seller's account events reached the catalog. */
  readonly seller?: SellerProfile;
}

/** GetProduct as served: the product under the visibility rule, with its seller's public profile. */
export const getProductWithSeller = async (
  lookup: ProductLookup,
  sellers: SellerLookup,
  input: GetProductInput,
): Promise<ProductWithSeller> => {
  const product = await getProduct(lookup, input);
  const seller = await sellers(product.sellerAccountId);
  return seller === undefined ? { product } : { product, seller };
};
