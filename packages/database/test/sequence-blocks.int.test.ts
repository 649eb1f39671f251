import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { quoteIdent, sequenceInBlocks, type Database } from '../src/index.js';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  testEngines,
} from '../src/testing/index.js';

describe.each(testEngines())('sequenceInBlocks on $name', ({ create }) => {
  const schema = freshSchemaName('sequence_blocks');
  let db: Database;
  let sequences = 0;
  /** A fresh sequence: its quoted name, and how far it has been advanced. */
  const newSequence = async () => {
    const name = `${quoteIdent(schema)}.seq_${++sequences}`;
    await db.query(`create sequence ${name}`);
    const advancedTo = async () =>
      Number((await db.query<{ last_value: string }>(`select last_value from ${name}`)).rows[0]?.last_value);
    return { name, advancedTo };
  };

  beforeAll(async () => {
    db = await create();
    await db.query(`create schema ${quoteIdent(schema)}`);
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  it('hands out the numbers of one block before taking the next', async () => {
    const sequence = await newSequence();
    const take = sequenceInBlocks(sequence.name, { blockSize: 4 });
    const taken: number[] = [];
    for (let n = 0; n < 5; n++) taken.push(await take(db));
    expect(taken).toEqual([1, 2, 3, 4, 5]);
    // Two blocks of four: one statement each, not one per number.
    expect(await sequence.advancedTo()).toBe(8);
  });

  it('gives concurrent callers distinct numbers, one block for all of them', async () => {
    const sequence = await newSequence();
    const take = sequenceInBlocks(sequence.name, { blockSize: 32 });
    const taken = await Promise.all(Array.from({ length: 20 }, () => take(db)));
    expect(new Set(taken).size).toBe(20);
    expect(await sequence.advancedTo()).toBe(32);
  });

  it('never gives two processes the same number', async () => {
    const sequence = await newSequence();
    const first = sequenceInBlocks(sequence.name, { blockSize: 3 });
    const second = sequenceInBlocks(sequence.name, { blockSize: 3 });
    const taken: number[] = [];
    for (let n = 0; n < 7; n++) taken.push(await first(db), await second(db));
    expect(new Set(taken).size).toBe(14);
  });

  it("takes a block in the caller's transaction, and keeps it when that transaction rolls back", async () => {
    const sequence = await newSequence();
    const take = sequenceInBlocks(sequence.name, { blockSize: 2 });
    await expect(
      db.transaction(async (tx) => {
        expect(await take(tx)).toBe(1);
        throw new Error('the command failed');
      }),
    ).rejects.toThrow('the command failed');
    expect(await take(db)).toBe(2);
  });

  it('refuses a block size that is not a positive integer', () => {
    expect(() => sequenceInBlocks('"s".seq', { blockSize: 0 })).toThrow('blockSize');
  });
});
