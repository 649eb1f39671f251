import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { NewestFirstOrder, newestFirst } from '../src/result-order.js';
import type { Orderable } from '../src/result-order.js';

const scanned = (order: NewestFirstOrder<Orderable>): string[] => {
  const ids: string[] = [];
  order.scan((document) => {
    ids.push(document.id);
    return true;
  });
  return ids;
};

describe('newestFirst', () => {
  it('orders by creation time descending, then by id', () => {
    const documents = [
      { id: 'b', createdAtMs: 1 },
      { id: 'a', createdAtMs: 1 },
      { id: 'c', createdAtMs: 2 },
    ];

    expect(documents.sort(newestFirst).map((document) => document.id)).toEqual(['c', 'a', 'b']);
  });
});

describe('NewestFirstOrder', () => {
  it('scans what a full sort would give, after any inserts and deletes', () => {
    const operation = fc.record({
      id: fc.integer({ min: 1, max: 30 }).map((n) => `product_${n}`),
      createdAtMs: fc.integer({ min: 0, max: 5 }),
      insert: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 80 }), (operations) => {
        const order = new NewestFirstOrder<Orderable>();
        const live = new Map<string, Orderable>();
        for (const { id, createdAtMs, insert } of operations) {
          const existing = live.get(id);
          if (existing) {
            order.delete(existing);
            live.delete(id);
          }
          if (insert) {
            order.insert({ id, createdAtMs });
            live.set(id, { id, createdAtMs });
          }
        }

        expect(scanned(order)).toEqual([...live.values()].sort(newestFirst).map((document) => document.id));
      }),
    );
  });

  it('ignores the deletion of a document it does not hold', () => {
    const order = new NewestFirstOrder<Orderable>();
    order.insert({ id: 'a', createdAtMs: 1 });

    order.delete({ id: 'b', createdAtMs: 1 });

    expect(scanned(order)).toEqual(['a']);
  });

  it('stops scanning when the visitor answers false', () => {
    const order = new NewestFirstOrder<Orderable>();
    for (const [id, createdAtMs] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      order.insert({ id, createdAtMs });
    const visited: string[] = [];

    order.scan((document) => {
      visited.push(document.id);
      return visited.length < 2;
    });

    expect(visited).toEqual(['c', 'b']);
  });
});
