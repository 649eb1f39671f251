import { describe, expect, it } from '@jest/globals';
import { toDriverParam, toDriverParams } from '../src/driver-params.js';

describe('toDriverParam', () => {
  it('sends null for null and undefined', () => {
    expect(toDriverParams([null, undefined])).toEqual([null, null]);
    expect(toDriverParams(undefined)).toEqual([]);
  });

  it('passes strings, numbers and booleans through', () => {
    expect(toDriverParams(['text', 42, 1.5, true])).toEqual(['text', 42, 1.5, true]);
  });

  it('sends bigints as decimal text, so int8 beyond 2^53 stays exact', () => {
    expect(toDriverParam(9007199254740993n)).toBe('9007199254740993');
  });

  it('sends dates as UTC ISO 8601, whatever the local time zone', () => {
    expect(toDriverParam(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)))).toBe('2024-01-02T03:04:05.678Z');
  });

  it('refuses an invalid date instead of sending garbage', () => {
    expect(() => toDriverParam(new Date('not a date'))).toThrow('invalid Date');
  });

  it('sends a Buffer as a plain Uint8Array over the same bytes', () => {
    const bytes = Buffer.from([1, 2, 3]).subarray(1);
    const sent = toDriverParam(bytes);
    expect(sent).toBeInstanceOf(Uint8Array);
    expect(Array.from(sent as Uint8Array)).toEqual([2, 3]);
  });

  it('keeps arrays as arrays (PostgreSQL arrays), converting their elements', () => {
    expect(toDriverParam(['a', undefined, 5n, new Date(0)])).toEqual([
      'a',
      null,
      '5',
      '1970-01-01T00:00:00.000Z',
    ]);
  });

  it('sends plain objects as JSON text, bigints inside as strings', () => {
    expect(toDriverParam({ a: 1, nested: { big: 2n }, list: [true] })).toBe(
      '{"a":1,"nested":{"big":"2"},"list":[true]}',
    );
  });
});
