import { describe, expect, it } from '@jest/globals';
import { boundParam, MAX_PREPARED_STATEMENTS, PreparedStatements } from '../src/pglite-statement.js';

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

/** The message types of a buffer of frontend messages, in order. */
const kindsOf = (message: Uint8Array): string[] => {
  const kinds: string[] = [];
  for (let offset = 0; offset < message.byteLength;) {
    kinds.push(String.fromCharCode(message[offset]!));
    offset += 1 + new DataView(message.buffer, message.byteOffset + offset + 1, 4).getInt32(0);
  }
  return kinds;
};

describe('PreparedStatements', () => {
  it('parses a statement on its first run only: Parse, Bind, Describe portal, Execute, Sync, then without Parse', () => {
    const statements = new PreparedStatements();
    const first = statements.statement('select $1::int4 as n', [7]);
    expect(kindsOf(first.message)).toEqual(['P', 'B', 'D', 'E', 'S']);
    first.parsed(true);
    const again = statements.statement('select $1::int4 as n', [8]);
    expect(kindsOf(again.message)).toEqual(['B', 'D', 'E', 'S']);
    again.parsed(false);
    expect(kindsOf(statements.statement('select $1::int4 as n', [9]).message)).toEqual(['B', 'D', 'E', 'S']);
  });

  it('parses again a statement whose Parse failed', () => {
    const statements = new PreparedStatements();
    statements.statement('selec $1', [1]).parsed(false);
    expect(kindsOf(statements.statement('selec $1', [1]).message)).toEqual(['P', 'B', 'D', 'E', 'S']);
  });

  it('closes the least recently run statement once the cache is full, ahead of the next message', () => {
    const statements = new PreparedStatements();
    for (let n = 0; n <= MAX_PREPARED_STATEMENTS; n++) {
      statements.statement(`select ${n} + $1`, [n]).parsed(true);
      // The first statement stays recently run: the second is the one closed.
      if (n === 1) statements.statement('select 0 + $1', [0]).parsed(true);
    }
    expect(kindsOf(statements.statement('select 0 + $1', [0]).message)).toEqual(['C', 'B', 'D', 'E', 'S']);
    expect(kindsOf(statements.statement('select 1 + $1', [1]).message)).toEqual(['P', 'B', 'D', 'E', 'S']);
  });
});
