import { describe, expect, it } from '@jest/globals';
import { AppError } from '@marketplace/platform';
import { CONDITIONS } from '@marketplace/vocabulary';
import { listCategories } from '../src/application/list-categories.query.js';
import { COMPARABLES_CONSIDERED, recommendPriceFor } from '../src/application/recommend-price.query.js';
import {
  MIN_COMPARABLES,
  RECOVERY_RATES,
  lotSizeFactorOf,
  median,
  recommendPrice,
} from '../src/domain/pricing-recommendation.js';

describe('recommendPrice', () => {
  const base = {
    condition: 'overstock',
    originalRetailCents: 10_000,
    quantity: 1,
    comparableRatios: [],
  } as const;

  it('applies the condition recovery rate and its range when there are no comparables', () => {
    const recommendation = recommendPrice(base);

    expect(recommendation).toMatchObject({
      recommendedUnitPriceCents: 5_000,
      lowUnitPriceCents: 4_000,
      highUnitPriceCents: 6_000,
      basis: { conditionRecoveryRate: 0.5, comparableListings: 0, appliedRatio: 0.5, lotSizeFactor: 1 },
    });
    expect(recommendation.basis.comparableMedianRatio).toBeUndefined();
    expect(recommendation.basis.explanation).toContain('table rate alone');
  });

  it('ranks conditions from salvage to new, each range around its recommendation', () => {
    const prices = CONDITIONS.map((condition) => recommendPrice({ ...base, condition }));
    for (const { lowUnitPriceCents, recommendedUnitPriceCents, highUnitPriceCents } of prices) {
      expect(lowUnitPriceCents).toBeLessThan(recommendedUnitPriceCents);
      expect(recommendedUnitPriceCents).toBeLessThan(highUnitPriceCents);
    }
    const recommended = prices.map((price) => price.recommendedUnitPriceCents);
    expect(recommended).toEqual([...recommended].sort((a, b) => a - b));
  });

  it('ignores the market below the minimum number of comparables', () => {
    const few = Array.from({ length: MIN_COMPARABLES - 1 }, () => 0.9);
    expect(recommendPrice({ ...base, comparableRatios: few }).recommendedUnitPriceCents).toBe(5_000);
  });

  it('moves halfway towards the median ratio of enough comparables', () => {
    const recommendation = recommendPrice({ ...base, comparableRatios: [0.2, 0.7, 0.7, 0.8, 0.9] });

    expect(recommendation.basis.comparableMedianRatio).toBe(0.7);
    expect(recommendation.basis.appliedRatio).toBeCloseTo(0.6);
    expect(recommendation).toMatchObject({
      recommendedUnitPriceCents: 6_000,
      lowUnitPriceCents: 5_000,
      highUnitPriceCents: 7_000,
    });
    expect(recommendation.basis.explanation).toContain(
      'median of 5 comparable public listings (70% of retail)',
    );
  });

  it('lowers the unit price of large lots', () => {
    expect(lotSizeFactorOf(99)).toBe(1);
    expect(lotSizeFactorOf(100)).toBe(0.95);
    expect(lotSizeFactorOf(500)).toBe(0.9);
    expect(lotSizeFactorOf(1_000_000)).toBe(0.85);
    const lot = recommendPrice({ ...base, quantity: 1_000 });
    expect(lot.recommendedUnitPriceCents).toBe(4_250);
    expect(lot.basis.explanation).toContain('for a lot of 1000 units');
  });

  it('never recommends less than one cent', () => {
    const cheap = recommendPrice({
      ...base,
      condition: 'salvage',
      originalRetailCents: 1,
      comparableRatios: [0, 0, 0, 0, 0],
    });
    expect(cheap.lowUnitPriceCents).toBe(1);
  });

  it('is deterministic, whatever order the comparables come in', () => {
    const ratios = [0.3, 0.9, 0.5, 0.45, 0.6, 0.52];
    expect(recommendPrice({ ...base, comparableRatios: ratios })).toEqual(
      recommendPrice({ ...base, comparableRatios: [...ratios].reverse() }),
    );
    expect(median(ratios)).toBeCloseTo(0.51);
  });

  it('documents a rate for every condition', () => {
    expect(Object.keys(RECOVERY_RATES).sort()).toEqual([...CONDITIONS].sort());
  });
});

describe('recommendPriceFor', () => {
  it('reads the comparables of the category and condition asked', async () => {
    const asked: unknown[] = [];
    const recommendation = await recommendPriceFor(
      async (...args) => {
        asked.push(args);
        return [0.7, 0.7, 0.7, 0.7, 0.7];
      },
      { category: 'tools', condition: 'overstock', originalRetailCents: 10_000 },
    );
    expect(asked).toEqual([['tools', 'overstock', COMPARABLES_CONSIDERED]]);
    expect(recommendation.recommendedUnitPriceCents).toBe(6_000);
  });

  it('names every invalid field at once', async () => {
    const failure = await recommendPriceFor(async () => [], {
      category: 'boats',
      condition: 'used',
      originalRetailCents: 0,
      quantity: 1.5,
    }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(AppError);
    expect((failure as AppError).violations?.map(({ path }) => path)).toEqual([
      'category',
      'condition',
      'originalRetailCents',
      'quantity',
    ]);
  });
});

describe('listCategories', () => {
  it('answers every category in vocabulary order, zero counts included', async () => {
    const categories = await listCategories(async () => new Map([['tools', 3]]));

    expect(categories).toHaveLength(11);
    expect(categories[0]).toEqual({ id: 'electronics', productCount: 0 });
    expect(categories.find(({ id }) => id === 'tools')).toEqual({ id: 'tools', productCount: 3 });
  });
});
