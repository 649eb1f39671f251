import { describe, expect, it } from '@jest/globals';
import { catalogSearchQuerySchema } from '../src/contexts/catalog/catalog-search.schema.js';
import { violationsOf } from '../src/edge/schemas/validate.js';

const parse = (query: Record<string, unknown>) => catalogSearchQuerySchema.safeParse(query);

/** The parameters named by the violations of a rejected query. */
const rejected = (query: Record<string, unknown>): string[] => {
  const result = parse(query);
  if (result.success) throw new Error(`accepted ${JSON.stringify(query)}`);
  return violationsOf(result.error).map(({ path }) => path);
};

describe('catalog search query parameters', () => {
  it('default limit to 20 and offset to 0', () => {
    expect(parse({}).data).toEqual({ limit: 20, offset: 0 });
  });

  it('accept every parameter at its bounds', () => {
    expect(
      parse({
        q: 'pallet of earbuds',
        category: 'electronics',
        condition: 'customer_returns',
        min_price: '0',
        max_price: '12.5',
        limit: '100',
        offset: '2147483647',
      }).data,
    ).toEqual({
      q: 'pallet of earbuds',
      category: 'electronics',
      condition: 'customer_returns',
      min_price: '0',
      max_price: '12.5',
      limit: 100,
      offset: 2147483647,
    });
    expect(parse({ limit: '1' }).data?.limit).toBe(1);
  });

  it('treat empty values as not given and ignore unknown parameters', () => {
    expect(parse({ q: '', limit: '', category: '', sort: 'price' }).data).toEqual({ limit: 20, offset: 0 });
  });

  it.each([
    ['limit', '101'],
    ['limit', '0'],
    ['limit', '-1'],
    ['limit', '1.5'],
    ['limit', 'ten'],
    ['limit', '1e2'],
    ['offset', '-1'],
    ['offset', '2147483648'],
    ['offset', 'x'],
    ['offset', '99999999999'],
    ['category', 'furniture'],
    ['category', 'Electronics'],
    ['condition', 'broken'],
    ['min_price', '-1'],
    ['min_price', '1.234'],
    ['min_price', 'abc'],
    ['min_price', '1e3'],
    ['max_price', '10.'],
    ['max_price', '.5'],
    ['q', 'x'.repeat(1001)],
  ])('reject %s=%s naming the parameter', (name, value) => {
    expect(rejected({ [name]: value })).toEqual([name]);
  });

  it('reject a parameter given twice', () => {
    const result = parse({ limit: ['10', '20'] });
    expect(result.success).toBe(false);
    expect(violationsOf(result.error!)).toEqual([{ path: 'limit', message: 'must be given once' }]);
  });

  it('reject a minimum price above the maximum', () => {
    expect(rejected({ min_price: '10', max_price: '9.99' })).toEqual(['min_price']);
    expect(parse({ min_price: '10', max_price: '10' }).success).toBe(true);
  });

  it('name every bad parameter at once', () => {
    expect(rejected({ limit: '500', offset: 'x', category: 'nope' }).sort()).toEqual([
      'category',
      'limit',
      'offset',
    ]);
  });
});
