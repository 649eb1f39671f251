import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { SearchFilters } from '../search-index.port.js';
import { MAX_VECTOR_CANDIDATES } from '../vector/hnsw-vector-index.js';
import type { VectorIndex } from '../vector/vector-index.port.js';
import { contractDocument, type ContractPayload } from './search-index.contract.js';

export interface VectorIndexContractOptions {
  /** A new, empty index of 3-dimensional vectors for each test. */
  create(): Promise<VectorIndex<ContractPayload>>;
  /** Releases what `create` opened (a remote index). */
  destroy?(index: VectorIndex<ContractPayload>): Promise<void>;
}

/** A unit vector in 3-d at `degrees` from the x axis, in the x-y plane. */
export const vectorAt = (degrees: number): Float32Array => {
  const radians = (degrees * Math.PI) / 180;
  return new Float32Array([Math.cos(radians), Math.sin(radians), 0]);
};

const publicOnly = { visibility: 'public' } as const;

/**
 * The behaviour every VectorIndex adapter must have (the kNN half of semantic search). Run it from the adapter's
 * own test file: `vectorIndexContract('HNSW', { create: async () => createHnswVectorIndex({ dimensions: 3 }) })`.
 */
export const vectorIndexContract = (adapterName: string, options: VectorIndexContractOptions): void => {
  describe(`VectorIndex contract: ${adapterName}`, () => {
    let index: VectorIndex<ContractPayload>;

    beforeEach(async () => {
      index = await options.create();
    });
    afterEach(async () => {
      await options.destroy?.(index);
    });

    const ids = async (filters: SearchFilters, limit = 10, degrees = 0): Promise<string[]> =>
      (await index.search({ vector: vectorAt(degrees), filters, limit })).map((hit) => hit.id);

    it('answers the nearest first with the cosine as similarity and the document as stored', async () => {
      await index.upsert(contractDocument(1), vectorAt(60));
      await index.upsert(contractDocument(2, { version: 3 }), vectorAt(10));
      await index.upsert(contractDocument(3), vectorAt(120));
      const hits = await index.search({ vector: vectorAt(0), filters: publicOnly, limit: 10 });
      expect(hits.map((hit) => hit.id)).toEqual(['product_2', 'product_1']);
      expect(hits[0]!.similarity).toBeCloseTo(Math.cos(Math.PI / 18), 4);
      expect(hits[1]!.similarity).toBeCloseTo(0.5, 4);
      expect(hits[0]!.document).toEqual(contractDocument(2, { version: 3 }));
      expect(await ids(publicOnly, 1)).toEqual(['product_2']);
    });

    it('leaves out the unrelated and the opposite, and answers nothing to a zero vector', async () => {
      await index.upsert(contractDocument(1), vectorAt(90));
      await index.upsert(contractDocument(2), vectorAt(180));
      await index.upsert(contractDocument(3), vectorAt(30));
      expect(await ids(publicOnly)).toEqual(['product_3']);
      expect(await index.search({ vector: new Float32Array(3), filters: publicOnly, limit: 10 })).toEqual([]);
    });

    it('applies category, condition, price and visibility filters to the candidates', async () => {
      await index.upsertMany([
        { document: contractDocument(1), vector: vectorAt(1) },
        { document: contractDocument(2, { category: 'furniture' }), vector: vectorAt(2) },
        { document: contractDocument(3, { condition: 'salvage' }), vector: vectorAt(3) },
        { document: contractDocument(4, { priceCents: 50_000 }), vector: vectorAt(4) },
        { document: contractDocument(5, { public: false }), vector: vectorAt(5) },
      ]);
      expect(await ids(publicOnly)).toEqual(['product_1', 'product_2', 'product_3', 'product_4']);
      expect(await ids({ visibility: 'any' })).toHaveLength(5);
      expect(await ids({ ...publicOnly, category: 'furniture' })).toEqual(['product_2']);
      expect(await ids({ ...publicOnly, condition: 'salvage' })).toEqual(['product_3']);
      expect(await ids({ ...publicOnly, maxPriceCents: 10_000 })).toEqual([
        'product_1',
        'product_2',
        'product_3',
      ]);
      expect(await ids({ ...publicOnly, category: 'furniture', maxPriceCents: 10_000 }, 1)).toEqual([
        'product_2',
      ]);
    });

    it('filters the nearest candidates: a far listing passing a selective filter is found among them', async () => {
      await index.upsertMany(
        Array.from({ length: 300 }, (_, i) => ({
          document: contractDocument(i + 1, { category: i === 299 ? 'furniture' : 'electronics' }),
          vector: vectorAt((i * 80) / 300),
        })),
      );
      expect(await ids({ ...publicOnly, category: 'furniture' }, 5)).toEqual(['product_300']);
    });

    it(`chooses the ${MAX_VECTOR_CANDIDATES} nearest before the filters apply (specification 4.1)`, async () => {
      // Every listing but the farthest is electronics; the farthest is outside the nearest candidates, so a
      // filter on its category finds nothing, where a filter inside the nearest-neighbour search would find it.
      const count = MAX_VECTOR_CANDIDATES + 52;
      await index.upsertMany(
        Array.from({ length: count }, (_, i) => ({
          document: contractDocument(i + 1, { category: i === count - 1 ? 'furniture' : 'electronics' }),
          vector: vectorAt(i === count - 1 ? 85 : (i * 60) / count),
        })),
      );
      expect(await index.count()).toBe(count);
      expect(await ids({ ...publicOnly, category: 'furniture' }, 5)).toEqual([]);
    }, 60_000);

    it('keeps the newest version: a replacement moves the vector, an older or equal one is stale', async () => {
      expect(await index.upsert(contractDocument(1, { version: 2 }), vectorAt(80))).toBe('applied');
      expect(await index.upsert(contractDocument(1, { version: 3, title: 'Moved' }), vectorAt(5))).toBe(
        'applied',
      );
      expect(await index.upsert(contractDocument(1, { version: 3 }), vectorAt(80))).toBe('stale');
      expect(await index.upsert(contractDocument(1, { version: 1 }), vectorAt(80))).toBe('stale');
      const [hit] = await index.search({ vector: vectorAt(0), filters: publicOnly, limit: 10 });
      expect(hit?.document.title).toBe('Moved');
      expect(hit?.similarity).toBeCloseTo(Math.cos((5 * Math.PI) / 180), 4);
      expect(await index.count()).toBe(1);
    });

    it('removes as of a version, and a late older upsert does not bring the vector back', async () => {
      await index.upsert(contractDocument(1, { version: 2 }), vectorAt(5));
      expect(await index.remove('product_1', 1)).toBe('stale');
      expect(await index.remove('product_1', 3)).toBe('applied');
      expect(await index.upsert(contractDocument(1, { version: 3 }), vectorAt(5))).toBe('stale');
      expect(await ids(publicOnly)).toEqual([]);
      expect(await index.upsert(contractDocument(1, { version: 4 }), vectorAt(5))).toBe('applied');
      expect(await ids(publicOnly)).toEqual(['product_1']);
    });

    it('removes many in order, reporting each outcome', async () => {
      await index.upsertMany([
        { document: contractDocument(1, { version: 2 }), vector: vectorAt(10) },
        { document: contractDocument(2), vector: vectorAt(20) },
      ]);
      expect(
        await index.removeMany([
          { id: 'product_1', version: 1 },
          { id: 'product_2', version: 2 },
          { id: 'product_3', version: 1 },
        ]),
      ).toEqual(['stale', 'applied', 'applied']);
      expect(await index.removeMany([])).toEqual([]);
      expect(await ids(publicOnly)).toEqual(['product_1']);
      expect(await index.upsert(contractDocument(3, { version: 1 }), vectorAt(5))).toBe('stale');
    });

    it('upserts many in order, reporting each outcome', async () => {
      const outcomes = await index.upsertMany([
        { document: contractDocument(1, { version: 2 }), vector: vectorAt(10) },
        { document: contractDocument(1, { version: 1 }), vector: vectorAt(20) },
        { document: contractDocument(2), vector: vectorAt(20) },
      ]);
      expect(outcomes).toEqual(['applied', 'stale', 'applied']);
      expect(await ids(publicOnly)).toEqual(['product_1', 'product_2']);
    });

    it('clears every vector and every remembered version', async () => {
      await index.upsert(contractDocument(1, { version: 5 }), vectorAt(10));
      await index.clear();
      expect(await index.count()).toBe(0);
      expect(await ids(publicOnly)).toEqual([]);
      expect(await index.upsert(contractDocument(1, { version: 1 }), vectorAt(10))).toBe('applied');
    });

    it('re-ranks by the query moved towards its nearest hits when asked for feedback', async () => {
      await index.upsertMany([
        { document: contractDocument(1), vector: vectorAt(20) },
        { document: contractDocument(2), vector: vectorAt(-21) },
        { document: contractDocument(3), vector: vectorAt(30) },
      ]);
      expect(await ids(publicOnly)).toEqual(['product_1', 'product_2', 'product_3']);
      // The query moved halfway to its nearest hit points at 10°: product_3 (20° away) before product_2 (31°).
      const hits = await index.search({
        vector: vectorAt(0),
        filters: publicOnly,
        limit: 10,
        feedback: { hits: 1, weight: 1 },
      });
      expect(hits.map((hit) => hit.id)).toEqual(['product_1', 'product_3', 'product_2']);
      expect(hits[0]!.similarity).toBeCloseTo(Math.cos(Math.PI / 18), 4);
    });

    it('rejects a limit below 1, a vector of other dimensions and a version that is not a positive integer', async () => {
      await expect(index.search({ vector: vectorAt(0), filters: publicOnly, limit: 0 })).rejects.toThrow(
        RangeError,
      );
      await expect(
        index.search({ vector: new Float32Array([1, 0]), filters: publicOnly, limit: 1 }),
      ).rejects.toThrow(RangeError);
      await expect(index.upsert(contractDocument(1, { version: 0 }), vectorAt(0))).rejects.toThrow(
        RangeError,
      );
    });
  });
};
