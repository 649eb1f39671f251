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

  it('refuses zero dimensions', () => {
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
