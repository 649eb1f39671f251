import { discountPercent } from '@marketplace/platform';
import type { CatalogProduct } from './catalog-product.js';

/** A product's discount off its original retail price, in whole percent; undefined without one. */
export const discountPercentOf = ({
  priceCents,
  originalRetailPriceCents,
}: Pick<CatalogProduct, 'priceCents' | 'originalRetailPriceCents'>): number | undefined =>
  discountPercent(priceCents, originalRetailPriceCents);
