import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { InvertedIndex } from '../src/inverted-index.js';
import { indexTerms, queryTerms } from '../src/lexical-analysis.js';
import type { QueryTerm } from '../src/lexical-analysis.js';
import { newestFirst } from '../src/result-order.js';

interface Listing {
  readonly id: string;
  readonly createdAtMs: number;
  readonly title: string;
  readonly description: string;
}

const FIELDS = [
  { text: (listing: Listing) => listing.title, boost: 2 },
  { text: (listing: Listing) => listing.description, boost: 1 },
];
const newIndex = (): InvertedIndex<Listing> => new InvertedIndex<Listing>(FIELDS);
const everything = (): boolean => true;
const firstHundred = { offset: 0, limit: 100 };

const idsFor = (index: InvertedIndex<Listing>, text: string): string[] =>
  index.search(queryTerms(text), everything, firstHundred).page.map(({ document }) => document.id);

/**
 * What the index should answer, computed the slow and obvious way: every listing is analysed on the spot, each
 * query term is looked for in it, and BM25+ is evaluated from its definition (k1 1.2, b 0.7, δ 0.5; a field's
 * length is its number of distinct terms; title boost 2, description 1).
 */
const naiveSearch = (
  listings: readonly Listing[],
  terms: readonly QueryTerm[],
  accepts: (listing: Listing) => boolean,
): { id: string; score: number; listing: Listing }[] => {
  const analysed = listings.map((listing) => ({
    listing,
    fields: FIELDS.map(({ text, boost }) => {
      const frequencies = new Map<string, number>();
      for (const term of indexTerms(text(listing))) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
      return { frequencies, boost };
    }),
  }));
  const count = analysed.length;
  const averageLengths = FIELDS.map(
    (_, field) => analysed.reduce((sum, { fields }) => sum + fields[field]!.frequencies.size, 0) / count,
  );
  const holds = (fields: (typeof analysed)[number]['fields'], term: string): boolean =>
    fields.some(({ frequencies }) => frequencies.has(term));
  const termScore = (fields: (typeof analysed)[number]['fields'], term: string): number =>
    fields.reduce((sum, { frequencies, boost }, field) => {
      const frequency = frequencies.get(term) ?? 0;
      if (frequency === 0) return sum;
      const holding = analysed.filter((other) => other.fields[field]!.frequencies.has(term)).length;
      const idf = Math.log(1 + (count - holding + 0.5) / (holding + 0.5));
      const norm = 1.2 * (1 - 0.7 + (0.7 * frequencies.size) / averageLengths[field]!);
      return sum + boost * idf * (0.5 + (frequency * 2.2) / (frequency + norm));
    }, 0);
  const results = [];
  for (const { listing, fields } of analysed) {
    if (!accepts(listing)) continue;
    let score = 0;
    let matchesAll = true;
    for (const { whole, parts } of terms) {
      const byWhole = holds(fields, whole);
      const byParts = parts.length > 0 && parts.every((part) => holds(fields, part));
      if (!byWhole && !byParts) matchesAll = false;
      if (byWhole) score += termScore(fields, whole);
      if (byParts) for (const part of parts) score += termScore(fields, part);
    }
    if (matchesAll) results.push({ id: listing.id, score, listing });
  }
  return results;
};

/** The index's answer agrees with the naive one: same total, same documents, same scores, in ranking order. */
const expectSameAnswer = (
  index: InvertedIndex<Listing>,
  listings: readonly Listing[],
  text: string,
  accepts: (listing: Listing) => boolean,
): void => {
  const terms = queryTerms(text);
  const { page, total } = index.search(terms, accepts, { offset: 0, limit: listings.length + 1 });
  const expected = naiveSearch(listings, terms, accepts);

  expect(total).toBe(expected.length);
  expect(page.map(({ document }) => document.id).sort()).toEqual(expected.map(({ id }) => id).sort());
  const expectedScores = new Map(expected.map(({ id, score }) => [id, score]));
  for (const { document, score } of page) expect(score).toBeCloseTo(expectedScores.get(document.id)!, 9);
  for (let i = 1; i < page.length; i++) {
    const before = page[i - 1]!;
    const after = page[i]!;
    expect(before.score).toBeGreaterThanOrEqual(after.score);
    if (before.score === after.score) expect(newestFirst(before.document, after.document)).toBeLessThan(0);
  }
};

// A small vocabulary with a few very common words, plurals, a function word and model numbers written three
// ways, so queries often match several listings, by whole compounds or by their parts.
const WORDS = ['lot', 'lot', 'lot', 'chair', 'chairs', 'oak', 'lamp', 'red', 'the'];
const MODELS = ['WH-1000XM4', 'WH1000XM4', 'WH 1000XM4', 'usb-c', 'USB C'];
const text = (maxWords: number): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(...WORDS, ...MODELS), { maxLength: maxWords }).map((words) => words.join(' '));
const listing = (idCount: number): fc.Arbitrary<Listing> =>
  fc.record({
    id: fc.integer({ min: 1, max: idCount }).map((n) => `product_${n}`),
    // Few distinct times, so equal scores often break on creation time and then on id.
    createdAtMs: fc.integer({ min: 0, max: 3 }),
    title: text(5),
    description: text(8),
  });
const query = text(3).filter((words) => queryTerms(words).length > 0);
// Filters pass a listing or not on its creation time here; the index only sees a predicate.
const filter = fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined });
const acceptsFor =
  (excludedTime: number | undefined) =>
  (candidate: Listing): boolean =>
    candidate.createdAtMs !== excludedTime;

describe('InvertedIndex', () => {
  it('answers as a naive evaluation of every listing does, rarest term first or not', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(listing(60), { selector: ({ id }) => id, maxLength: 60 }),
        fc.array(fc.tuple(query, filter), { minLength: 1, maxLength: 5 }),
        (listings, queries) => {
          const index = newIndex();
          for (const each of listings) index.set(each);
          for (const [words, excludedTime] of queries) {
            expectSameAnswer(index, listings, words, acceptsFor(excludedTime));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('stays right through any sequence of replacements and deletions (tombstones, compaction, renumbering)', () => {
    const operation = fc.oneof(
      listing(8).map((replacement) => ({ set: replacement })),
      fc.integer({ min: 1, max: 8 }).map((n) => ({ delete: `product_${n}` })),
    );
    fc.assert(
      fc.property(
        fc.array(operation, { maxLength: 120 }),
        query,
        filter,
        (operations, words, excludedTime) => {
          const index = newIndex();
          const live = new Map<string, Listing>();
          for (const change of operations) {
            if ('set' in change) {
              index.set(change.set);
              live.set(change.set.id, change.set);
            } else {
              index.delete(change.delete);
              live.delete(change.delete);
            }
          }

          expect(index.size).toBe(live.size);
          for (const [id, each] of live) expect(index.get(id)).toBe(each);
          expectSameAnswer(index, [...live.values()], words, acceptsFor(excludedTime));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps finding each listing by its current words only, after many updates of every listing', () => {
    const index = newIndex();
    const listingsCount = 50;
    const version = (n: number, round: number): Listing => ({
      id: `product_${n}`,
      createdAtMs: n,
      title: round % 2 === 0 ? `Oak chair ${n}` : `Red lamp ${n}`,
      description: `round${round}`,
    });
    for (let round = 0; round < 21; round++) {
      for (let n = 0; n < listingsCount; n++) index.set(version(n, round));
    }

    expect(index.size).toBe(listingsCount);
    expect(idsFor(index, 'oak chair')).toHaveLength(listingsCount);
    expect(idsFor(index, 'red lamp')).toEqual([]);
    expect(idsFor(index, 'round20')).toHaveLength(listingsCount);
    expect(idsFor(index, 'round19')).toEqual([]);
    expect(idsFor(index, 'chair 7')).toEqual(['product_7']);
  });

  it('pages through the ranking: every page is the slice of the whole ranking', () => {
    const index = newIndex();
    const listings = Array.from({ length: 40 }, (_, n) => ({
      id: `product_${n}`,
      createdAtMs: n % 4,
      title: n % 3 === 0 ? 'Oak chair' : 'Oak chair, oak table',
      description: n % 5 === 0 ? 'oak' : '',
    }));
    for (const each of listings) index.set(each);
    const ranking = index.search(queryTerms('oak'), everything, { offset: 0, limit: 40 });

    for (const [offset, limit] of [
      [0, 7],
      [7, 7],
      [35, 10],
      [39, 1],
      [40, 5],
    ] as const) {
      const page = index.search(queryTerms('oak'), everything, { offset, limit });
      expect(page.total).toBe(40);
      expect(page.page).toEqual(ranking.page.slice(offset, offset + limit));
    }
  });

  it('ranks a title match above a description-only match', () => {
    const index = newIndex();
    index.set({ id: 'described', createdAtMs: 2, title: 'Mixed lot', description: 'with a toaster' });
    index.set({ id: 'named', createdAtMs: 1, title: 'Toaster', description: 'kitchen surplus' });

    expect(idsFor(index, 'toaster')).toEqual(['named', 'described']);
  });

  it('weighs a rare term above a common one', () => {
    const index = newIndex();
    // Both match "widget gizmo" with the same title; one's description repeats the common word, the other's the
    // rare one. (Rarity counts per field: the other listings hold "widget" in their descriptions.)
    index.set({ id: 'more common', createdAtMs: 2, title: 'Widget gizmo', description: 'widget' });
    index.set({ id: 'more rare', createdAtMs: 1, title: 'Widget gizmo', description: 'gizmo' });
    for (let n = 0; n < 20; n++)
      index.set({ id: `filler_${n}`, createdAtMs: 0, title: 'Spare parts', description: 'widget' });

    expect(idsFor(index, 'widget gizmo')).toEqual(['more rare', 'more common']);
  });

  it('matches nothing for a term no listing holds, and forgets everything on clear', () => {
    const index = newIndex();
    index.set({ id: 'a', createdAtMs: 1, title: 'Oak chair', description: '' });

    expect(index.search(queryTerms('oak sofa'), everything, firstHundred)).toEqual({ page: [], total: 0 });
    index.clear();
    expect(index.size).toBe(0);
    expect(idsFor(index, 'oak')).toEqual([]);
  });
});
