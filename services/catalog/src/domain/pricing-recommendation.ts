import type { Condition } from '@marketplace/vocabulary';

/**
 * Share of the original retail price a lot in each condition typically recovers on a liquidation marketplace
 * (the midpoint of the range the seller can expect, and the range around it). Salvage is sold for parts;
 * customer returns are untested; shelf pulls are unused but may lack packaging; overstock is new in its box;
 * new or refurbished carries a warranty-grade promise. The rates are a starting point the market adjusts
 * (see `recommendPrice`); changing them here changes every recommendation.
 */
export const RECOVERY_RATES: Readonly<Record<Condition, { low: number; typical: number; high: number }>> = {
  salvage: { low: 0.05, typical: 0.1, high: 0.15 },
  customer_returns: { low: 0.2, typical: 0.3, high: 0.4 },
  shelf_pulls: { low: 0.35, typical: 0.45, high: 0.55 },
  overstock: { low: 0.4, typical: 0.5, high: 0.6 },
  new_or_refurbished: { low: 0.5, typical: 0.6, high: 0.7 },
};

/** Below this many comparable listings the market says too little: the table rate applies alone. */
export const MIN_COMPARABLES = 5;
/** How far the market may pull the table rate: a handful of odd listings must not dictate the price. */
const MARKET_WEIGHT = 0.5;

/**
 * Larger lots sell at a lower unit price (the buyer takes on more risk and handling): the factor for the first
 * lot size a quantity reaches, from the largest down.
 */
export const LOT_SIZE_FACTORS: readonly { readonly fromUnits: number; readonly factor: number }[] = [
  { fromUnits: 1_000, factor: 0.85 },
  { fromUnits: 500, factor: 0.9 },
  { fromUnits: 100, factor: 0.95 },
  { fromUnits: 1, factor: 1 },
];

export interface PriceRecommendationInput {
  readonly condition: Condition;
  readonly originalRetailCents: number;
  /** Units in the lot, at least 1. */
  readonly quantity: number;
  /**
   * Price-to-retail ratios (`price / original retail`) of public listings of the same category and condition.
   */
  readonly comparableRatios: readonly number[];
}

export interface PriceRecommendation {
  readonly recommendedUnitPriceCents: number;
  readonly lowUnitPriceCents: number;
  readonly highUnitPriceCents: number;
  readonly basis: {
    readonly conditionRecoveryRate: number;
    readonly comparableListings: number;
    /** Absent when there were fewer than MIN_COMPARABLES comparables. */
    readonly comparableMedianRatio?: number;
    readonly appliedRatio: number;
    readonly lotSizeFactor: number;
    readonly explanation: string;
  };
}

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export const lotSizeFactorOf = (quantity: number): number =>
  LOT_SIZE_FACTORS.find(({ fromUnits }) => quantity >= fromUnits)?.factor ?? 1;

const percent = (ratio: number): string => `${Math.round(ratio * 1000) / 10}%`;

/**
 * The recommended unit price of a lot: the condition's recovery rate, moved halfway towards the median
 * price-to-retail ratio of comparable public listings when there are at least MIN_COMPARABLES of them, times
 * the lot-size factor, applied to the original retail price. The range scales the same way from the
 * condition's low and high rates. Pure and deterministic: the same input gives the same cents.
 */
export const recommendPrice = ({
  condition,
  originalRetailCents,
  quantity,
  comparableRatios,
}: PriceRecommendationInput): PriceRecommendation => {
  const rates = RECOVERY_RATES[condition];
  const marketRatio = comparableRatios.length >= MIN_COMPARABLES ? median(comparableRatios) : undefined;
  // The market shifts the whole band, so the range stays around the recommendation.
  const shift = marketRatio === undefined ? 0 : (marketRatio - rates.typical) * MARKET_WEIGHT;
  const lotSizeFactor = lotSizeFactorOf(quantity);
  const priceAt = (rate: number): number =>
    Math.max(1, Math.round(originalRetailCents * Math.max(0, rate + shift) * lotSizeFactor));
  const appliedRatio = rates.typical + shift;
  const market =
    marketRatio === undefined
      ? `fewer than ${MIN_COMPARABLES} comparable public listings (${comparableRatios.length}), so the table rate alone`
      : `moved halfway towards the median of ${comparableRatios.length} comparable public listings (${percent(marketRatio)} of retail)`;
  const lot =
    lotSizeFactor === 1 ? '' : `, less ${percent(1 - lotSizeFactor)} for a lot of ${quantity} units`;
  return {
    recommendedUnitPriceCents: priceAt(rates.typical),
    lowUnitPriceCents: priceAt(rates.low),
    highUnitPriceCents: priceAt(rates.high),
    basis: {
      conditionRecoveryRate: rates.typical,
      comparableListings: comparableRatios.length,
      ...(marketRatio === undefined ? {} : { comparableMedianRatio: marketRatio }),
      appliedRatio,
      lotSizeFactor,
      explanation:
        `${condition} lots typically recover ${percent(rates.typical)} of retail; ${market}: ` +
        `${percent(appliedRatio)} of retail${lot}.`,
    },
  };
};
