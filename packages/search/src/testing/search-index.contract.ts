import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { SEARCH_TEXT_LIMITS } from '../search-index.port.js';
import type { SearchDocument, SearchIndex, SearchQuery } from '../search-index.port.js';

/** The payload the suite stores: enough to see that hits carry it back unchanged. */
export interface ContractPayload {
  readonly sku: string;
}

export interface SearchIndexContractOptions {
  /** A new, empty index for each test. */
  create(): Promise<SearchIndex<ContractPayload>>;
  /** Releases what `create` opened (a remote index, a connection). */
  destroy?(index: SearchIndex<ContractPayload>): Promise<void>;
}

const T0 = Date.UTC(2026, 0, 1);

/** A public electronics listing created at T0 + `n` minutes; tests override what they look at. */
export const contractDocument = (
  n: number,
  overrides: Partial<SearchDocument<ContractPayload>> = {},
): SearchDocument<ContractPayload> => ({
  id: `product_${n}`,
  version: 1,
  title: `Listing ${n}`,
  description: 'Surplus lot',
  category: 'electronics',
  condition: 'overstock',
  priceCents: 10_000,
  public: true,
  createdAtMs: T0 + n * 60_000,
  payload: { sku: `SKU-${n}` },
  ...overrides,
});

/**
 * The behaviour every SearchIndex adapter must have. Run it from the adapter's own test file:
 * `searchIndexContract('embedded', { create: async () => createEmbeddedSearchIndex() })`.
 */
export const searchIndexContract = (adapterName: string, options: SearchIndexContractOptions): void => {
  describe(`SearchIndex contract: ${adapterName}`, () => {
    let index: SearchIndex<ContractPayload>;

    beforeEach(async () => {
      index = await options.create();
    });
    afterEach(async () => {
      await options.destroy?.(index);
    });

    const ids = async (query: Partial<SearchQuery> & { text?: string }): Promise<string[]> => {
      const result = await index.search({ filters: { visibility: 'any' }, limit: 100, offset: 0, ...query });
      return result.hits.map((hit) => hit.id);
    };
    const idsFor = (text: string): Promise<string[]> => ids({ text });

    describe('queries without text', () => {
      it('count and page every filter combination after replacements and removals', async () => {
        const categories = ['electronics', 'furniture'];
        const conditions = ['overstock', 'salvage', ''];
        const facetsOf = (n: number, round: number) => ({
          category: categories[(n + round) % 2]!,
          condition: conditions[(n * (round + 1)) % 3]!,
          public: (n + round) % 3 !== 0,
          priceCents: 1_000 * (n % 7),
        });
        const live = new Map<string, SearchDocument<ContractPayload>>();
        await index.upsertMany(
          Array.from({ length: 30 }, (_, i) => {
            const document = contractDocument(i + 1, facetsOf(i + 1, 0));
            live.set(document.id, document);
            return document;
          }),
        );
        // A third changes category, condition or visibility (version 2); a sixth is removed.
        for (let n = 1; n <= 30; n += 3) {
          const document = contractDocument(n, { version: 2, ...facetsOf(n, 1) });
          await index.upsert(document);
          live.set(document.id, document);
        }
        for (let n = 2; n <= 30; n += 6) {
          await index.remove(`product_${n}`, 3);
          live.delete(`product_${n}`);
        }

        const newestFirstIds = [...live.values()]
          .sort((a, b) => b.createdAtMs - a.createdAtMs)
          .map((document) => document);
        for (const visibility of ['any', 'public'] as const) {
          for (const category of [undefined, ...categories]) {
            for (const condition of [undefined, ...conditions]) {
              for (const maxPriceCents of [undefined, 3_000]) {
                const filters = { visibility, category, condition, maxPriceCents };
                const expected = newestFirstIds
                  .filter(
                    (document) =>
                      (visibility === 'any' || document.public) &&
                      (category === undefined || document.category === category) &&
                      (condition === undefined || document.condition === condition) &&
                      (maxPriceCents === undefined || document.priceCents <= maxPriceCents),
                  )
                  .map((document) => document.id);
                const page = await index.search({ filters, limit: 3, offset: 2 });

                expect({ filters, total: page.total, ids: page.hits.map((hit) => hit.id) }).toEqual({
                  filters,
                  total: expected.length,
                  ids: expected.slice(2, 5),
                });
              }
            }
          }
        }
      });
    });

    describe('writes and versions', () => {
      it('finds an upserted document and returns it with its payload as stored', async () => {
        const document = contractDocument(1, { title: 'Dell Latitude laptop' });
        expect(await index.upsert(document)).toBe('applied');

        const result = await index.search({
          text: 'latitude',
          filters: { visibility: 'any' },
          limit: 10,
          offset: 0,
        });

        expect(result.total).toBe(1);
        expect(result.hits[0]?.document).toEqual(document);
        expect(result.hits[0]?.score).toBeGreaterThan(0);
        expect(await index.count()).toBe(1);
      });

      it('replaces a document with a newer version, so its old words no longer match', async () => {
        await index.upsert(contractDocument(1, { title: 'Blue chair' }));

        expect(await index.upsert(contractDocument(1, { version: 2, title: 'Red sofa' }))).toBe('applied');

        expect(await idsFor('chair')).toEqual([]);
        expect(await idsFor('sofa')).toEqual(['product_1']);
        expect(await index.count()).toBe(1);
      });

      it('ignores an update with the same or an older version than the one it holds', async () => {
        await index.upsert(contractDocument(1, { version: 3, title: 'Red sofa' }));

        expect(await index.upsert(contractDocument(1, { version: 3, title: 'Blue chair' }))).toBe('stale');
        expect(await index.upsert(contractDocument(1, { version: 2, title: 'Blue chair' }))).toBe('stale');

        expect(await idsFor('chair')).toEqual([]);
        expect(await idsFor('sofa')).toEqual(['product_1']);
      });

      it('removes a document as of a version, and a late older upsert does not bring it back', async () => {
        await index.upsert(contractDocument(1, { title: 'Red sofa' }));

        expect(await index.remove('product_1', 2)).toBe('applied');
        expect(await index.upsert(contractDocument(1, { version: 2, title: 'Red sofa' }))).toBe('stale');

        expect(await idsFor('sofa')).toEqual([]);
        expect(await index.count()).toBe(0);
        expect(await index.remove('product_1', 1)).toBe('stale');
        expect(await index.upsert(contractDocument(1, { version: 3, title: 'Red sofa' }))).toBe('applied');
        expect(await idsFor('sofa')).toEqual(['product_1']);
      });

      it('upserts many in order, reporting each outcome', async () => {
        const outcomes = await index.upsertMany([
          contractDocument(1, { version: 2, title: 'Red sofa' }),
          contractDocument(2, { title: 'Oak table' }),
          contractDocument(1, { version: 1, title: 'Blue chair' }),
        ]);

        expect(outcomes).toEqual(['applied', 'applied', 'stale']);
        expect(await idsFor('sofa')).toEqual(['product_1']);
        expect(await index.count()).toBe(2);
      });

      it('clears every document and every remembered version', async () => {
        await index.upsert(contractDocument(1, { version: 5 }));
        await index.remove('product_2', 4);

        await index.clear();

        expect(await index.count()).toBe(0);
        expect(await index.upsert(contractDocument(1, { version: 1 }))).toBe('applied');
        expect(await index.upsert(contractDocument(2, { version: 1 }))).toBe('applied');
      });

      it('rejects a version that is not a positive integer', async () => {
        await expect(index.upsert(contractDocument(1, { version: 0 }))).rejects.toThrow(RangeError);
        await expect(index.remove('product_1', 1.5)).rejects.toThrow(RangeError);
      });
    });

    describe('text analysis', () => {
      it('ignores case, punctuation and accents', async () => {
        await index.upsert(contractDocument(1, { title: 'Café Espresso Machine' }));

        expect(await idsFor('CAFE espresso!')).toEqual(['product_1']);
        expect(await idsFor('"machine", café?')).toEqual(['product_1']);
      });

      it('matches plural and singular forms either way', async () => {
        await index.upsert(contractDocument(1, { title: 'Pallet of laptop batteries' }));
        await index.upsert(contractDocument(2, { title: 'Two laptops' }));

        expect((await idsFor('battery')).sort()).toEqual(['product_1']);
        expect((await idsFor('laptops')).sort()).toEqual(['product_1', 'product_2']);
        expect((await idsFor('pallets')).sort()).toEqual(['product_1']);
      });

      it('finds a model number whole, without its hyphen, and by its parts', async () => {
        await index.upsert(contractDocument(1, { title: 'Lenovo ThinkPad, Intel Core i5-8250U, 8 GB' }));
        await index.upsert(contractDocument(2, { title: 'Sony WH-1000XM4 headphones' }));
        await index.upsert(contractDocument(3, { title: 'Sony WH1000XM4 wireless' }));

        expect(await idsFor('i5-8250U')).toEqual(['product_1']);
        expect(await idsFor('i58250u')).toEqual(['product_1']);
        expect(await idsFor('8250U')).toEqual(['product_1']);
        expect(await idsFor('i5')).toEqual(['product_1']);
        expect((await idsFor('WH-1000XM4')).sort()).toEqual(['product_2', 'product_3']);
        expect((await idsFor('wh1000xm4')).sort()).toEqual(['product_2', 'product_3']);
        expect(await idsFor('1000XM4')).toEqual(['product_2']);
        expect(await idsFor('WH 1000XM4')).toEqual(['product_2']);
      });

      it('keeps decimals and thousands together', async () => {
        await index.upsert(contractDocument(1, { title: '15.6-inch monitor, lot of 1,000' }));
        await index.upsert(contractDocument(2, { title: '15 monitors, 6 inch stand' }));

        expect(await idsFor('15.6 inch')).toEqual(['product_1']);
        expect(await idsFor('1000')).toEqual(['product_1']);
      });

      it('requires every word of the query (AND)', async () => {
        await index.upsert(contractDocument(1, { title: 'Dell laptop' }));
        await index.upsert(contractDocument(2, { title: 'HP laptop' }));
        await index.upsert(contractDocument(3, { title: 'Dell monitor' }));

        expect(await idsFor('dell laptop')).toEqual(['product_1']);
        expect(await idsFor('dell tablet')).toEqual([]);
      });

      it('does not require function words', async () => {
        await index.upsert(contractDocument(1, { title: 'iPhone case' }));

        expect(await idsFor('a case for the iphone')).toEqual(['product_1']);
      });

      it('matches nothing when the text has no searchable word', async () => {
        await index.upsert(contractDocument(1, { title: 'The best of the lot' }));

        const result = await index.search({
          text: 'the !!',
          filters: { visibility: 'any' },
          limit: 10,
          offset: 0,
        });

        expect(result).toEqual({ hits: [], total: 0 });
      });

      it('searches the description as well as the title', async () => {
        await index.upsert(
          contractDocument(1, { title: 'Mixed lot', description: 'Includes cordless drills' }),
        );

        expect(await idsFor('cordless drill')).toEqual(['product_1']);
      });
    });

    describe('ranking', () => {
      it('ranks a title match above a description-only match', async () => {
        await index.upsert(contractDocument(1, { title: 'Mixed lot', description: 'Contains a toaster' }));
        await index.upsert(contractDocument(2, { title: 'Toaster', description: 'Kitchen surplus' }));

        expect(await idsFor('toaster')).toEqual(['product_2', 'product_1']);
      });

      it('breaks equal scores newest first, then by id', async () => {
        await index.upsert(contractDocument(1, { title: 'Desk lamp' }));
        await index.upsert(contractDocument(3, { title: 'Desk lamp' }));
        await index.upsert(
          contractDocument(2, { title: 'Desk lamp', createdAtMs: contractDocument(3).createdAtMs }),
        );

        expect(await idsFor('desk lamp')).toEqual(['product_2', 'product_3', 'product_1']);
      });

      it('lists every document newest first when there is no text, blank text included', async () => {
        await index.upsertMany([contractDocument(2), contractDocument(3), contractDocument(1)]);

        expect(await ids({})).toEqual(['product_3', 'product_2', 'product_1']);
        expect(await ids({ text: '   ' })).toEqual(['product_3', 'product_2', 'product_1']);
        const result = await index.search({ filters: { visibility: 'any' }, limit: 10, offset: 0 });
        expect(result.hits[0]?.score).toBeUndefined();
      });
    });

    describe('filters', () => {
      beforeEach(async () => {
        await index.upsertMany([
          contractDocument(1, {
            title: 'Drill',
            category: 'tools',
            condition: 'salvage',
            priceCents: 1_000,
            discountPercent: 80,
          }),
          contractDocument(2, {
            title: 'Drill',
            category: 'tools',
            condition: 'overstock',
            priceCents: 2_000,
            discountPercent: 50,
          }),
          contractDocument(3, {
            title: 'Drill',
            category: 'toys',
            condition: 'overstock',
            priceCents: 3_000,
            discountPercent: 49,
          }),
          contractDocument(4, {
            title: 'Drill',
            category: 'tools',
            condition: '',
            priceCents: 4_000,
            public: false,
          }),
        ]);
      });

      it.each([
        ['category', { category: 'tools' }, ['product_4', 'product_2', 'product_1']],
        ['condition', { condition: 'overstock' }, ['product_3', 'product_2']],
        ['minimum price, inclusive', { minPriceCents: 2_000 }, ['product_4', 'product_3', 'product_2']],
        ['maximum price, inclusive', { maxPriceCents: 2_000 }, ['product_2', 'product_1']],
        ['price range', { minPriceCents: 1_500, maxPriceCents: 3_500 }, ['product_3', 'product_2']],
        [
          'minimum discount, inclusive; none without a discount',
          { minDiscountPercent: 50 },
          ['product_2', 'product_1'],
        ],
        [
          'a zero minimum discount still requires one',
          { minDiscountPercent: 0 },
          ['product_3', 'product_2', 'product_1'],
        ],
        ['all at once', { category: 'tools', condition: 'overstock', maxPriceCents: 2_000 }, ['product_2']],
      ])('filters by %s, with and without text', async (_name, filters, expected) => {
        expect(await ids({ filters: { visibility: 'any', ...filters } })).toEqual(expected);
        expect(await ids({ text: 'drill', filters: { visibility: 'any', ...filters } })).toEqual(expected);
      });

      it('returns only public documents when asked to', async () => {
        expect(await ids({ filters: { visibility: 'public' } })).toEqual([
          'product_3',
          'product_2',
          'product_1',
        ]);
        expect(await ids({ text: 'drill', filters: { visibility: 'public', category: 'tools' } })).toEqual([
          'product_2',
          'product_1',
        ]);
      });
    });

    describe('paging', () => {
      beforeEach(async () => {
        await index.upsertMany(
          Array.from({ length: 25 }, (_, i) =>
            contractDocument(i + 1, {
              title: i % 2 === 0 ? 'Office chair' : 'Office chair, ergonomic chair',
            }),
          ),
        );
      });

      it.each([[undefined], ['office chair']])(
        'pages through every match exactly once (text %s)',
        async (text) => {
          const everything = await index.search({
            text,
            filters: { visibility: 'any' },
            limit: 100,
            offset: 0,
          });
          const pages = [];
          for (let offset = 0; offset < 25; offset += 10) {
            const page = await index.search({ text, filters: { visibility: 'any' }, limit: 10, offset });
            expect(page.total).toBe(25);
            pages.push(...page.hits.map((hit) => hit.id));
          }

          expect(everything.total).toBe(25);
          expect(pages).toEqual(everything.hits.map((hit) => hit.id));
          expect(new Set(pages).size).toBe(25);
        },
      );

      it('answers an offset past the end with no hits and the full total', async () => {
        const result = await index.search({
          text: 'chair',
          filters: { visibility: 'any' },
          limit: 10,
          offset: 30,
        });

        expect(result).toEqual({ hits: [], total: 25 });
      });

      it('accepts text up to the word limit and rejects text beyond it', async () => {
        const words = (n: number): string => Array.from({ length: n }, () => 'chair').join(' ');

        expect((await ids({ text: words(SEARCH_TEXT_LIMITS.maxWords) })).length).toBe(25);
        await expect(idsFor(words(SEARCH_TEXT_LIMITS.maxWords + 1))).rejects.toThrow(RangeError);
        await expect(idsFor('x'.repeat(SEARCH_TEXT_LIMITS.maxCharacters + 1))).rejects.toThrow(RangeError);
      });

      it('rejects a limit below 1 or a negative offset', async () => {
        await expect(index.search({ filters: { visibility: 'any' }, limit: 0, offset: 0 })).rejects.toThrow(
          RangeError,
        );
        await expect(index.search({ filters: { visibility: 'any' }, limit: 10, offset: -1 })).rejects.toThrow(
          RangeError,
        );
      });
    });
  });
};
