import { describe, expect, it } from '@jest/globals';
import type { BulkUpsertItem, ExistingListing } from '../src/domain/bulk-upsert.js';
import { planBulkUpsert } from '../src/domain/bulk-upsert.js';
import type { Listing } from '../src/domain/listing.events.js';

const item = (
  index: number,
  sku: string | undefined,
  fields: BulkUpsertItem['fields'] = ['name'],
): BulkUpsertItem => ({
  index,
  draft: {
    name: `Lot ${index}`,
    description: 'Pallet',
    ...(sku === undefined ? {} : { sku }),
    priceCents: 500,
  },
  fields,
});

const existing = (productId: string, sku: string): ExistingListing => ({
  listing: { productId, sku } as Listing,
  version: 3,
});

describe('planBulkUpsert', () => {
  it('creates every item in create mode, skus or not, repeated or not', () => {
    const steps = planBulkUpsert('create', [item(0, 'A'), item(1, 'A'), item(2, undefined)], new Map());
    expect(steps.map((step) => step.kind)).toEqual(['create', 'create', 'create']);
  });

  it('updates the one listing with the sku with the fields the item sent, and creates where none has it', () => {
    const steps = planBulkUpsert(
      'upsert_by_sku',
      [item(0, 'A', ['name', 'priceCents']), item(1, 'B')],
      new Map([['A', [existing('product_7', 'A')]]]),
    );
    expect(steps).toEqual([
      { kind: 'update', index: 0, productId: 'product_7', changes: { name: 'Lot 0', priceCents: 500 } },
      { kind: 'create', index: 1, draft: item(1, 'B').draft },
    ]);
  });

  it('keys items by the sku as stored: surrounding spaces find the listing and count as the same sku', () => {
    const steps = planBulkUpsert(
      'upsert_by_sku',
      [item(0, ' A\t'), item(1, 'A'), item(2, '  B ')],
      new Map([['A', [existing('product_7', 'A')]]]),
    );
    expect(steps).toEqual([
      { kind: 'update', index: 0, productId: 'product_7', changes: { name: 'Lot 0' } },
      {
        kind: 'refused',
        index: 1,
        violations: [{ path: 'sku', message: 'appears earlier in this request (item 0): send it once' }],
      },
      { kind: 'create', index: 2, draft: item(2, '  B ').draft },
    ]);
  });

  it('refuses an item without a sku, a sku sent twice (the later ones) and a sku several listings share', () => {
    const steps = planBulkUpsert(
      'upsert_by_sku',
      [item(0, undefined), item(1, '  '), item(2, 'A'), item(3, 'A'), item(4, 'S')],
      new Map([['S', [existing('product_1', 'S'), existing('product_2', 'S')]]]),
    );
    expect(steps.map((step) => [step.kind, step.kind === 'refused' ? step.violations : undefined])).toEqual([
      ['refused', [{ path: 'sku', message: 'is required to upsert by sku' }]],
      ['refused', [{ path: 'sku', message: 'is required to upsert by sku' }]],
      ['create', undefined],
      ['refused', [{ path: 'sku', message: 'appears earlier in this request (item 2): send it once' }]],
      [
        'refused',
        [
          {
            path: 'sku',
            message: 'names 2 of your listings: update them by product id, or give each its own sku',
          },
        ],
      ],
    ]);
  });
});
