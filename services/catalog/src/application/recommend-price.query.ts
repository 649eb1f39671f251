import { z } from 'zod';
import { CATEGORIES, CONDITIONS, LISTING_LIMITS } from '@marketplace/vocabulary';
import { recommendPrice } from '../domain/pricing-recommendation.js';
import type { PriceRecommendation } from '../domain/pricing-recommendation.js';
import { parseInput } from './validate-input.js';

export interface RecommendPriceInput {
  readonly category: string;
  readonly condition: string;
  readonly originalRetailCents: number;
  /** Units in the lot; absent: 1. */
  readonly quantity?: number;
}

/** `price / original retail` of the most recent public listings of a category and condition. */
export type ComparableRatios = (category: string, condition: string, limit: number) => Promise<number[]>;

/** How many recent comparables the median looks at: enough to be stable, recent enough to follow the market. */
export const COMPARABLES_CONSIDERED = 200;

const recommendPriceSchema = z.object({
  category: z.enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(', ')}` }),
  condition: z.enum(CONDITIONS, { error: `must be one of ${CONDITIONS.join(', ')}` }),
  originalRetailCents: z
    .number()
    .int('must be a whole number of cents')
    .min(1, 'must be at least 1')
    .max(LISTING_LIMITS.maxPriceCents, `must be at most ${LISTING_LIMITS.maxPriceCents}`),
  quantity: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(LISTING_LIMITS.maxQuantity, `must be at most ${LISTING_LIMITS.maxQuantity}`)
    .default(1),
});

/** RecommendPrice: validates, reads the comparables, and lets the pure domain function decide. */
export const recommendPriceFor = async (
  comparables: ComparableRatios,
  input: RecommendPriceInput,
): Promise<PriceRecommendation> => {
  const { category, condition, originalRetailCents, quantity } = parseInput(
    recommendPriceSchema,
    input,
    'price recommendation request',
  );
  return recommendPrice({
    condition,
    originalRetailCents,
    quantity,
    comparableRatios: await comparables(category, condition, COMPARABLES_CONSIDERED),
  });
};
