import { describe, expect, it } from '@jest/globals';
import { removeCommonDirections, type WordVectorTable } from '../src/index.js';

const tableOf = (rows: Record<string, number[]>): WordVectorTable => {
  const words = Object.keys(rows);
  const dimensions = rows[words[0]!]!.length;
  return {
    dimensions,
    words,
    rowOf: new Map(words.map((word, row) => [word, row])),
    scales: new Float32Array(words.length).fill(1),
    values: Int8Array.from(words.flatMap((word) => rows[word]!)),
  };
};

const rowOf = (table: WordVectorTable, word: string): number[] => {
  const row = table.rowOf.get(word)!;
  return Array.from(
    table.values.subarray(row * table.dimensions, (row + 1) * table.dimensions),
    (value) => value * table.scales[row]!,
  );
};

const cosine = (a: number[], b: number[]): number => {
  const dot = a.reduce((sum, value, i) => sum + value * b[i]!, 0);
  return dot / Math.hypot(...a) / Math.hypot(...b);
};

describe('removeCommonDirections (all-but-the-top)', () => {
  // Every row shares dimension 0 (a common offset) and varies most along dimension 1 (a direction all words
  // spread on, like word frequency); what tells the words apart in meaning is dimensions 2 and 3.
  const table = tableOf({
    alpha: [60, 40, 20, 0],
    beta: [60, 40, 0, 20],
    gamma: [60, -40, 20, 0],
    delta: [60, -40, 0, 20],
  });

  it('removes the mean and the dominant direction, so meaning decides which words are alike', () => {
    expect(cosine(rowOf(table, 'alpha'), rowOf(table, 'beta'))).toBeGreaterThan(0.9);
    expect(cosine(rowOf(table, 'alpha'), rowOf(table, 'gamma'))).toBeLessThan(0.5);

    const cleaned = removeCommonDirections(table, 1);

    expect(cosine(rowOf(cleaned, 'alpha'), rowOf(cleaned, 'gamma'))).toBeGreaterThan(0.99);
    expect(cosine(rowOf(cleaned, 'alpha'), rowOf(cleaned, 'beta'))).toBeLessThan(-0.99);
    for (const word of cleaned.words) {
      const [common, dominant] = rowOf(cleaned, word);
      expect(Math.abs(common!)).toBeLessThan(0.01);
      expect(Math.abs(dominant!)).toBeLessThan(0.01);
    }
  });

  it('keeps the words, their order and the dimensions', () => {
    const cleaned = removeCommonDirections(table, 2);
    expect(cleaned.words).toEqual(table.words);
    expect(cleaned.dimensions).toBe(table.dimensions);
    expect([...cleaned.rowOf]).toEqual([...table.rowOf]);
  });

  it('with no directions still centres the unit rows', () => {
    const centred = removeCommonDirections(table, 0);
    const sums = [0, 1, 2, 3].map((d) =>
      centred.words.reduce((sum, word) => sum + rowOf(centred, word)[d]!, 0),
    );
    for (const sum of sums) expect(Math.abs(sum)).toBeLessThan(0.02);
  });
});
