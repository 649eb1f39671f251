import { describe, expect, it } from '@jest/globals';
import { formatProductId, newEventId, parseProductId } from '../src/ids.js';

describe('product ids', () => {
  it('round-trips', () => {
    expect(parseProductId(formatProductId(42))).toBe(42);
  });
  it.each([
    'product_0',
    'product_',
    'product_01',
    'product_-1',
    'prod_1',
    'product_1x',
    'product_99999999999999999',
  ])('rejects %p', (id) => {
    expect(parseProductId(id)).toBeUndefined();
  });
});

describe('event ids', () => {
  it('are UUIDv7 and increase over time', () => {
    const first = newEventId();
    const second = newEventId();
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second > first).toBe(true);
  });
});
