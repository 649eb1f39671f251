import { CATEGORIES, CONDITIONS } from '@marketplace/vocabulary';
import type { Summary } from '../stats.js';

/** A saved search as both the REST API and the subscription service's gRPC take it (prices in cents). */
export interface SavedSearchQuery {
  readonly category: string;
  readonly condition?: string;
  readonly maxPrice: number;
  readonly search: string;
}

/** A listing of the fan-out workload (price in cents). */
export interface FanoutListing {
  readonly name: string;
  readonly category: string;
  readonly condition: string;
  readonly priceCents: number;
}

/** A deterministic generator, so two runs measure the same subscriptions and listings. */
const seeded = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

/**
 * Saved searches and listings drawn from one seeded sequence: category, condition in 4 of 5, a price cap and one
 * word of a `vocabulary`-word list per search; two words of the same list in each listing's title. Fewer words,
 * more matches per listing.
 */
export const fanoutWorkload = (vocabulary: number) => {
  const random = seeded(7);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const words = Array.from({ length: vocabulary }, (_, n) => `word${n.toString(36)}`);
  return {
    savedSearch: (): SavedSearchQuery => ({
      category: pick(CATEGORIES),
      ...(random() < 0.8 ? { condition: pick(CONDITIONS) } : {}),
      maxPrice: 500 + Math.floor(random() * 20_000),
      search: pick(words),
    }),
    listing: (): FanoutListing => ({
      name: `Lot of ${pick(words)} and ${pick(words)}`,
      category: pick(CATEGORIES),
      condition: pick(CONDITIONS),
      priceCents: 100 + Math.floor(random() * 20_000),
    }),
  };
};

/** One webhook request as the receiver saw it. */
export interface Arrival {
  readonly deliveryId: string;
  readonly productId: string;
  /** performance.now() when its body had arrived. */
  readonly arrivedAt: number;
}

/**
 * Milliseconds from each listing's publication to the first attempt of each of its deliveries. Computed after
 * the run: a webhook may arrive before its listing's 201 has been read.
 */
export const firstAttemptLatencies = (
  arrivals: readonly Arrival[],
  publishedAt: ReadonlyMap<string, number>,
): number[] => {
  const seen = new Set<string>();
  const latencies: number[] = [];
  for (const { deliveryId, productId, arrivedAt } of arrivals) {
    const published = publishedAt.get(productId);
    if (seen.has(deliveryId) || published === undefined) continue;
    seen.add(deliveryId);
    latencies.push(arrivedAt - published);
  }
  return latencies;
};

/** How many times the floor's latency a delivery took, at the median and the 99th percentile. */
export const latencyOverFloor = (measured: Summary, floor: Summary) => {
  const times = (value: number, limit: number) => Math.round((value / Math.max(0.1, limit)) * 10) / 10;
  return { p50: times(measured.p50, floor.p50), p99: times(measured.p99, floor.p99) };
};
