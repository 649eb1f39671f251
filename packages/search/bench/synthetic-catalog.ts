import { CATEGORIES, CONDITIONS } from '@marketplace/vocabulary';
import type { SearchDocument } from '../src/index.js';

/**
 * Deterministic synthetic listings for measurements: words drawn from a Zipf distribution over a
 * vocabulary of pronounceable pseudo-words, so a few words are very common (the worst case for a query)
 * and most are rare, as in real catalogs.
 */
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'do', 'gu', 'be', 'fi', 'ho'];

/** Mulberry32: a small seeded generator, so every run measures the same catalog. */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};

export const VOCABULARY: string[] = Array.from({ length: 5_000 }, (_, i) => {
  let word = '';
  for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  return word + 'x';
});

export const syntheticCatalog = (size: number, seed = 42): SearchDocument<null>[] => {
  const random = seededRandom(seed);
  // Zipf(1) by inverse transform over precomputed cumulative weights.
  const cumulative: number[] = [];
  let sum = 0;
  for (let rank = 1; rank <= VOCABULARY.length; rank++) cumulative.push((sum += 1 / rank));
  const word = (): string => {
    const target = random() * sum;
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return VOCABULARY[low]!;
  };
  const words = (count: number): string => Array.from({ length: count }, word).join(' ');
  return Array.from({ length: size }, (_, i) => ({
    id: `product_${i + 1}`,
    version: 1,
    title: `${words(5)} WH-${1000 + (i % 9000)}XM${i % 7}`,
    description: words(40),
    category: CATEGORIES[i % CATEGORIES.length]!,
    condition: CONDITIONS[i % CONDITIONS.length]!,
    priceCents: 100 + Math.floor(random() * 100_000),
    public: i % 10 !== 0,
    createdAtMs: Date.UTC(2026, 0, 1) + i * 1_000,
    payload: null,
  }));
};
