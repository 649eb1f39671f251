import { describe, expect, it } from '@jest/globals';
import { boundParam, extendedStatement } from '../src/pglite-statement.js';

describe('boundParam', () => {
  it('binds null as NULL and scalars as their text', () => {
    expect([null, undefined, 'text', 42, 1.5, true, false].map(boundParam)).toEqual([
      null,
      null,
      'text',
      '42',
      '1.5',
      'true',
      'false',
    ]);
  });

  it('binds bytes as bytes (binary format), whatever their view', () => {
    const bound = boundParam(Buffer.from([0, 255, 16]));
    expect(bound).toBeInstanceOf(Uint8Array);
    expect([...(bound as Uint8Array)]).toEqual([0, 255, 16]);
  });

  it('binds arrays as literals with every element quoted and escaped, NULLs and nesting kept', () => {
    expect(boundParam(['a', 'b"c', 'back\\slash', null, 7, ['x', null], Uint8Array.of(0, 255)])).toBe(
      '{"a","b\\"c","back\\\\slash",NULL,"7",{"x",NULL},"\\\\x00ff"}',
    );
    expect(boundParam([])).toBe('{}');
  });
});

describe('extendedStatement', () => {
  it('is Parse, Bind, Describe portal, Execute and Sync, in that order, in one buffer', () => {
    const message = extendedStatement('select $1::int4 as n', [7]);
    const kinds: string[] = [];
    for (let offset = 0; offset < message.byteLength;) {
      kinds.push(String.fromCharCode(message[offset]!));
      offset += 1 + new DataView(message.buffer, message.byteOffset + offset + 1, 4).getInt32(0);
    }
    expect(kinds).toEqual(['P', 'B', 'D', 'E', 'S']);
  });
});
