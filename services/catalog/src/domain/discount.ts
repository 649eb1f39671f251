import type { CatalogProduct } from './catalog-product.js';

/**
 * The discount of a listing (decisions, "Listings"): `1 - price / original retail price`, in whole percent.
 * Floored, so a listing advertised at "50% off" really is at least half off, and never negative (a price
 * above retail is no discount). Undefined without an original retail price: such a listing never passes a
 * `min_discount` filter. Integer arithmetic, so 1/3 off is 33 and not 33.000000000000004.
 */
export const discountPercentOf = ({
  priceCents,
  originalRetailPriceCents,
}: Pick<CatalogProduct, 'priceCents' | 'originalRetailPriceCents'>): number | undefined => {
  if (originalRetailPriceCents === undefined || originalRetailPriceCents <= 0) return undefined;
  const saved = originalRetailPriceCents - priceCents;
  return saved <= 0 ? 0 : Math.floor((saved * 100) / originalRetailPriceCents);
};
