import { describe, expect, it } from '@jest/globals';
import { sellerListingsQueryOf } from '../src/domain/seller-listings.query.js';

const filter = { status: '', visibility: '', category: '', sku: '', cursor: '', limit: 50 };

describe('sellerListingsQueryOf', () => {
  it('filters by the sku as stored: trimmed, and a blank one filters nothing', () => {
    expect(sellerListingsQueryOf(7, { ...filter, sku: ' A-1\t' })).toEqual({
      sellerAccountId: 7,
      sku: 'A-1',
      limit: 50,
    });
    expect(sellerListingsQueryOf(7, { ...filter, sku: '   ' })).toEqual({ sellerAccountId: 7, limit: 50 });
  });
});
