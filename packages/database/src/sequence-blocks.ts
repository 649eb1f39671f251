import type { Queryable } from './database.port.js';

/** Numbers taken from the sequence per round trip; the ones unused when the process stops are left as a gap. */
export const DEFAULT_SEQUENCE_BLOCK = 32;

/**
 * Hands out a PostgreSQL sequence's numbers, taking them `blockSize` at a time (one statement per block instead
 * of one per number: docs/architecture.md, "How work moves"). Numbers stay unique across processes, since each
 * comes from `nextval`; they are not dense (a block unused at exit is a gap, as a rolled-back `nextval` always
 * was) and, across replicas, not in creation order. `nextval` never rolls back, so the caller's queryable may be a
 * transaction: a block taken in one that then fails stays good for the next caller.
 *
 * `sequence` is the schema-qualified, quoted name (`"listing".product_number_seq`).
 */
export const sequenceInBlocks = (
  sequence: string,
  { blockSize = DEFAULT_SEQUENCE_BLOCK }: { blockSize?: number } = {},
): ((q: Queryable) => Promise<number>) => {
  if (!Number.isSafeInteger(blockSize) || blockSize < 1)
    throw new RangeError(`blockSize must be a positive integer, got ${blockSize}`);
  const block: number[] = [];
  let refilling: Promise<void> | undefined;

  const refill = async (q: Queryable): Promise<void> => {
    const { rows } = await q.query<{ n: string | number | bigint }>(
      'select nextval($1::regclass) as n from generate_series(1, $2)',
      [sequence, blockSize],
    );
    const numbers = rows.map((row) => Number(row.n));
    const bad = numbers.find((n) => !Number.isSafeInteger(n) || n < 1);
    if (bad !== undefined || numbers.length !== blockSize)
      throw new Error(`${sequence} returned ${String(bad ?? `${numbers.length} numbers`)}`);
    block.push(...numbers.sort((a, b) => a - b));
  };

  return async (q) => {
    for (;;) {
      const next = block.shift();
      if (next !== undefined) return next;
      if (refilling) {
        // Another caller is taking a block; if its statement fails, take one on this caller's queryable.
        await refilling.catch(() => undefined);
        continue;
      }
      refilling = refill(q).finally(() => {
        refilling = undefined;
      });
      await refilling;
    }
  };
};
