import { beforeEach, describe, expect, it } from '@jest/globals';
import {
  createHnswVectorIndex,
  MAX_VECTOR_CANDIDATES,
  SEMANTIC_SEARCH_FEEDBACK,
  type VectorIndex,
} from '../src/index.js';
import { contractDocument, vectorIndexContract, type ContractPayload } from '../src/testing/index.js';

vectorIndexContract('HNSW (usearch)', {
  create: async () => createHnswVectorIndex<ContractPayload>({ dimensions: 3 }),
});

/** A unit vector in 3-d at `degrees` from the x axis, in the x-y plane. */
const at = (degrees: number): Float32Array => {
  const radians = (degrees * Math.PI) / 180;
  return new Float32Array([Math.cos(radians), Math.sin(radians), 0]);
};
const publicOnly = { visibility: 'public' } as const;
const unit = (x: number, y: number, z: number): Float32Array => {
  const length = Math.hypot(x, y, z);
  return new Float32Array([x / length, y / length, z / length]);
};

describe('HNSW vector index (usearch)', () => {
  let index: VectorIndex<ContractPayload>;
  beforeEach(() => {
    index = createHnswVectorIndex<ContractPayload>({ dimensions: 3 });
  });

  it('returns the nearest first with the cosine as similarity, and the document untouched', async () => {
    await index.upsert(contractDocument(1), at(60));
    await index.upsert(contractDocument(2), at(10));
    await index.upsert(contractDocument(3), at(120));
    const hits = await index.search({ vector: at(0), filters: publicOnly, limit: 10 });
    expect(hits.map((hit) => hit.id)).toEqual(['product_2', 'product_1']);
    expect(hits[0]!.similarity).toBeCloseTo(Math.cos(Math.PI / 18), 4);
    expect(hits[1]!.similarity).toBeCloseTo(0.5, 4);
    expect(hits[0]!.document).toEqual(contractDocument(2));
  });

  it('leaves out what is unrelated or opposite (similarity 0) and answers nothing to a zero vector', async () => {
    await index.upsert(contractDocument(1), at(90));
    await index.upsert(contractDocument(2), at(180));
    expect(await index.search({ vector: at(0), filters: publicOnly, limit: 10 })).toEqual([]);
    expect(await index.search({ vector: new Float32Array(3), filters: publicOnly, limit: 10 })).toEqual([]);
  });

  it('applies category, condition, price and visibility filters to the candidates', async () => {
    await index.upsert(contractDocument(1), at(1));
    await index.upsert(contractDocument(2, { category: 'furniture' }), at(2));
    await index.upsert(contractDocument(3, { condition: 'used_good' }), at(3));
    await index.upsert(contractDocument(4, { priceCents: 50_000 }), at(4));
    await index.upsert(contractDocument(5, { public: false }), at(5));
    const ids = async (filters: Parameters<VectorIndex['search']>[0]['filters']) =>
      (await index.search({ vector: at(0), filters, limit: 10 })).map((hit) => hit.id);
    expect(await ids(publicOnly)).toEqual(['product_1', 'product_2', 'product_3', 'product_4']);
    expect(await ids({ visibility: 'any' })).toHaveLength(5);
    expect(await ids({ ...publicOnly, category: 'furniture' })).toEqual(['product_2']);
    expect(await ids({ ...publicOnly, condition: 'used_good' })).toEqual(['product_3']);
    expect(await ids({ ...publicOnly, maxPriceCents: 10_000 })).toEqual([
      'product_1',
      'product_2',
      'product_3',
    ]);
  });

  it('filters the nearest candidates, so a far listing passing a selective filter is still found', async () => {
    const entries = Array.from({ length: 300 }, (_, i) => ({
      document: contractDocument(i + 1, { category: i === 299 ? 'furniture' : 'electronics' }),
      // The furniture listing is the farthest of all from the query.
      vector: at((i * 80) / 300),
    }));
    await index.upsertMany(entries);
    const hits = await index.search({
      vector: at(0),
      filters: { ...publicOnly, category: 'furniture' },
      limit: 5,
    });
    expect(hits.map((hit) => hit.id)).toEqual(['product_300']);
    expect(MAX_VECTOR_CANDIDATES).toBeGreaterThan(300);
  });

  it('searches the HNSW graph once the index holds more than the candidates, and still finds the nearest', async () => {
    // A fixed pseudo-random 16-d cloud: random directions keep the graph well connected, unlike a 3-d arc.
    let seed = 7;
    const random = () => ((seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647) * 2 - 1;
    const wide = createHnswVectorIndex<ContractPayload>({ dimensions: 16 });
    const vectors = Array.from({ length: MAX_VECTOR_CANDIDATES + 200 }, () =>
      Float32Array.from({ length: 16 }, random),
    );
    await wide.upsertMany(vectors.map((vector, i) => ({ document: contractDocument(i + 1), vector })));
    for (const probe of [0, 1_000, MAX_VECTOR_CANDIDATES + 199]) {
      const [hit] = await wide.search({ vector: vectors[probe]!, filters: publicOnly, limit: 1 });
      expect(hit!.id).toBe(`product_${probe + 1}`);
      expect(hit!.similarity).toBeCloseTo(1, 4);
    }
  });

  it('keeps the highest version, removals included, and moves a replaced vector', async () => {
    expect(await index.upsert(contractDocument(1, { version: 2 }), at(0))).toBe('applied');
    expect(await index.upsert(contractDocument(1, { version: 1 }), at(80))).toBe('stale');
    expect(await index.upsert(contractDocument(1, { version: 3 }), at(45))).toBe('applied');
    const [hit] = await index.search({ vector: at(0), filters: publicOnly, limit: 1 });
    expect(hit!.similarity).toBeCloseTo(Math.SQRT1_2, 4);
    expect(await index.remove('product_1', 4)).toBe('applied');
    expect(await index.upsert(contractDocument(1, { version: 4 }), at(0))).toBe('stale');
    expect(await index.count()).toBe(0);
    expect(await index.search({ vector: at(0), filters: publicOnly, limit: 1 })).toEqual([]);
  });

  it('loads in order with one outcome per entry, and clears versions too', async () => {
    const outcomes = await index.upsertMany([
      { document: contractDocument(1, { version: 2 }), vector: at(0) },
      { document: contractDocument(1, { version: 1 }), vector: at(0) },
      { document: contractDocument(2), vector: at(0) },
    ]);
    expect(outcomes).toEqual(['applied', 'stale', 'applied']);
    await index.clear();
    expect(await index.count()).toBe(0);
    expect(await index.upsert(contractDocument(1, { version: 1 }), at(0))).toBe('applied');
  });

  it('rejects vectors of another dimension, bad versions and bad limits', async () => {
    await expect(index.upsert(contractDocument(1), new Float32Array(4))).rejects.toThrow(RangeError);
    await expect(index.upsert(contractDocument(1, { version: 0 }), at(0))).rejects.toThrow(RangeError);
    await expect(index.search({ vector: at(0), filters: publicOnly, limit: 0 })).rejects.toThrow(RangeError);
    await expect(
      index.search({ vector: new Float32Array(2), filters: publicOnly, limit: 1 }),
    ).rejects.toThrow(RangeError);
    expect(() => createHnswVectorIndex({ dimensions: 0 })).toThrow(RangeError);
  });

  describe('relevance feedback', () => {
    // Around the query (the x axis): two listings leaning towards y, one towards z. Alone, the query ranks the
    // z listing second; moved towards its nearest hit (a y listing), it ranks the other y listing second.
    beforeEach(async () => {
      await index.upsert(contractDocument(1, { category: 'electronics' }), unit(0.95, 0.31, 0));
      await index.upsert(contractDocument(2, { category: 'electronics' }), unit(0.9, 0.43, 0));
      await index.upsert(contractDocument(3, { category: 'electronics' }), unit(0.92, 0, 0.39));
    });

    it('re-ranks by the query moved towards its nearest hits', async () => {
      const ids = async (feedback?: { hits: number; weight: number }) =>
        (await index.search({ vector: unit(1, 0, 0), filters: publicOnly, limit: 2, feedback })).map(
          (hit) => hit.id,
        );
      expect(await ids()).toEqual(['product_1', 'product_3']);
      expect(await ids({ hits: 1, weight: 1 })).toEqual(['product_1', 'product_2']);
      // No weight, no move: the query's own order.
      expect(await ids({ hits: 1, weight: 0 })).toEqual(['product_1', 'product_3']);
    });

    it('takes the feedback from hits that pass the filters only, and keeps similarities in (0, 1]', async () => {
      await index.upsert(contractDocument(1, { category: 'furniture', version: 2 }), unit(0.95, 0.31, 0));
      const hits = await index.search({
        vector: unit(1, 0, 0),
        filters: { ...publicOnly, category: 'electronics' },
        limit: 10,
        feedback: { hits: 1, weight: 1 },
      });
      // Moved towards the filtered-out listing 1, the query would rank listing 2 first.
      expect(hits.map((hit) => hit.id)).toEqual(['product_3', 'product_2']);
      for (const hit of hits) {
        expect(hit.similarity).toBeGreaterThan(0);
        expect(hit.similarity).toBeLessThanOrEqual(1);
      }
    });

    it('is what semantic search asks for: a small move towards a few hits', () => {
      expect(SEMANTIC_SEARCH_FEEDBACK).toEqual({ hits: 5, weight: 0.25 });
    });
  });
});
