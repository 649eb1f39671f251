import { describe, expect, it } from '@jest/globals';
import {
  MAX_JSON_DEPTH,
  tooDeeplyNested,
  unstorableTextReason,
  unstorableTextViolations,
} from '../src/text.js';

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
};

describe('text PostgreSQL can store', () => {
  it.each([
    ['plain text', 'Pallet of 40 kettles'],
    ['right-to-left text and marks', 'מטבח\u200f ערכה \u202eabc'],
    ['combining marks', 'e\u0301 a\u0308\u0308\u0308'],
    ['emoji (a valid surrogate pair)', 'box 📦'],
    ['other control characters', 'tab\there\u0001'],
  ])('accepts %s', (_name, text) => {
    expect(unstorableTextReason(text)).toBeUndefined();
  });

  it.each([
    ['a NUL', 'a\u0000b', /NUL/],
    ['a lone high surrogate', 'a\ud800', /lone surrogate/],
    ['a lone low surrogate', '\udc00b', /lone surrogate/],
    ['a reversed pair', '\ude00\ud83d', /lone surrogate/],
  ])('refuses %s', (_name, text, reason) => {
    expect(unstorableTextReason(text)).toMatch(reason);
  });

  it('names every offending string and key by its path', () => {
    expect(
      unstorableTextViolations({
        name: 'ok',
        buyer: { email: 'a\u0000@b.co', tags: ['fine', '\ud800'] },
        ['k\u0000']: 1,
        amount: 12,
      }),
    ).toEqual([
      { path: 'k\u0000', message: expect.stringMatching(/field name .*NUL/) },
      { path: 'buyer/email', message: expect.stringMatching(/NUL/) },
      { path: 'buyer/tags/1', message: expect.stringMatching(/lone surrogate/) },
    ]);
    expect(unstorableTextViolations('\u0000', 'parameters')).toEqual([
      { path: 'parameters', message: expect.stringMatching(/NUL/) },
    ]);
    expect(unstorableTextViolations({ fine: ['א\u05b8', 3, null, true] })).toEqual([]);
  });

  it('answers a bounded list for a body full of bad strings', () => {
    expect(unstorableTextViolations(Array.from({ length: 10_000 }, () => '\u0000'))).toHaveLength(20);
  });

  it('walks deep values without exhausting the stack', () => {
    expect(unstorableTextViolations(nested(200_000))).toEqual([]);
  });
});

describe('JSON depth', () => {
  it('accepts nesting up to the cap and names the top-level field beyond it', () => {
    expect(tooDeeplyNested({ query: nested(MAX_JSON_DEPTH - 1) })).toBeUndefined();
    expect(tooDeeplyNested({ ok: 1, query: nested(MAX_JSON_DEPTH) })).toBe('query');
    expect(tooDeeplyNested([[[[]]]], 3)).toBe('0');
    expect(tooDeeplyNested('scalar', 0)).toBeUndefined();
  });

  it('stops at the cap on a value nested 100,000 deep', () => {
    expect(tooDeeplyNested({ a: nested(100_000) })).toBe('a');
  });
});
