import pluralize from 'pluralize';

/**
 * How text becomes terms, the same for documents and queries so both sides always agree:
 *
 * - case and accents fold (`Café` → `cafe`); apostrophes inside words vanish (`men's` → `men`);
 *   thousands separators vanish (`1,000` → `1000`); a decimal point between digits stays (`15.6`);
 * - words joined by `-`, `/`, `_` or `.` form a compound (`WH-1000XM4`, `i5-8250U`, `USB-C`), indexed both
 *   whole, without its joiners (`wh1000xm4`), and as each of its parts (`wh`, `1000xm4`), so it is found
 *   however the buyer writes it;
 * - plural words become singular (`laptops` → `laptop`, `batteries` → `battery`) with `pluralize`;
 *   only alphabetic terms of four letters or more, which spares model numbers and short codes (`us`, `cds`);
 * - a few English function words are dropped (`for`, `the`, `with`...): with AND semantics a query such as
 *   "case for iphone" must not require the word "for".
 */

/** A query term: the compound whole, or (when it was written with joiners) all of its parts. */
export interface QueryTerm {
  readonly whole: string;
  /** Empty for a simple word. */
  readonly parts: readonly string[];
}

const STOP_WORDS = new Set(
  'a an and are as at be by for from in into is it its of on or that the this to with'.split(' '),
);

// A unit of a compound: a number with optional decimals and an alphanumeric tail (`15.6`, `8250u`), or an
// alphanumeric run starting with a letter (`i5`, `wh`).
const ATOM = String.raw`\p{N}+(?:\.\p{N}+)*[\p{L}\p{N}]*|[\p{L}\p{N}]+`;
const JOINER = String.raw`[-\u2010\u2011/_.]`;
const COMPOUND = new RegExp(`(?:${ATOM})(?:${JOINER}(?:${ATOM}))*`, 'gu');
const ATOMS = new RegExp(ATOM, 'gu');
const COMBINING_MARKS = /\p{M}+/gu;
const APOSTROPHE_IN_WORD = /(?<=\p{L})['\u2019](?=\p{L})/gu;
const THOUSANDS_SEPARATOR = /(?<=\p{N}),(?=\p{N}{3}(?!\p{N}))/gu;
const ALPHABETIC = /^\p{L}+$/u;
const MIN_SINGULARIZED_LENGTH = 4;

const fold = (text: string): string =>
  text
    .normalize('NFKD')
    .replace(COMBINING_MARKS, '')
    .toLowerCase()
    .replace(APOSTROPHE_IN_WORD, '')
    .replace(THOUSANDS_SEPARATOR, '');

// pluralize tries hundreds of rules per word (~2 µs); a catalog's vocabulary is small, so remember answers.
// Bounded: past the cap, new words are computed each time instead of growing the cache.
const SINGULAR_CACHE_CAP = 200_000;
const singulars = new Map<string, string>();
const singularOf = (word: string): string => {
  let singular = singulars.get(word);
  if (singular === undefined) {
    singular = pluralize.singular(word);
    if (singulars.size < SINGULAR_CACHE_CAP) singulars.set(word, singular);
  }
  return singular;
};

/** The indexable form of one folded unit, or undefined for a function word. */
const termOf = (unit: string): string | undefined => {
  if (STOP_WORDS.has(unit)) return undefined;
  return unit.length >= MIN_SINGULARIZED_LENGTH && ALPHABETIC.test(unit) ? singularOf(unit) : unit;
};

const compoundsOf = (text: string): { whole: string | undefined; parts: string[] }[] =>
  Array.from(fold(text).matchAll(COMPOUND), ([compound]) => {
    const atoms = compound.match(ATOMS) ?? [];
    if (atoms.length === 1) return { whole: termOf(compound), parts: [] };
    return {
      whole: termOf(atoms.join('')),
      parts: atoms.map(termOf).filter((part): part is string => part !== undefined),
    };
  });

/** The terms a document field is indexed under (with repeats, which count as term frequency). */
export const indexTerms = (text: string): string[] =>
  compoundsOf(text).flatMap(({ whole, parts }) => (whole === undefined ? parts : [whole, ...parts]));

/** The distinct terms of a query, each to be matched whole or by all of its parts (a repeat adds nothing). */
export const queryTerms = (text: string): QueryTerm[] => {
  const terms = new Map<string, QueryTerm>();
  for (const { whole, parts } of compoundsOf(text)) {
    if (whole !== undefined && !terms.has(whole)) terms.set(whole, { whole, parts });
  }
  return [...terms.values()];
};
