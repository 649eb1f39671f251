import { describe, expect, it } from '@jest/globals';
import type { Request } from 'express';
import { ifMatchVersionsOf } from '../src/edge/http/if-match.js';

const withIfMatch = (value: string | undefined): Request =>
  ({ get: (name: string) => (name.toLowerCase() === 'if-match' ? value : undefined) }) as unknown as Request;

describe('If-Match on listing changes (RFC 9110, strong comparison)', () => {
  it('checks nothing without the header or with *', () => {
    expect(ifMatchVersionsOf(withIfMatch(undefined))).toBeUndefined();
    expect(ifMatchVersionsOf(withIfMatch(' * '))).toBeUndefined();
  });

  it('reads the versions of our strong ETags, one or several', () => {
    expect(ifMatchVersionsOf(withIfMatch('"3"'))).toEqual([3]);
    expect(ifMatchVersionsOf(withIfMatch('"3", "5" ,W/"6"'))).toEqual([3, 5]);
  });

  it('turns tags that can never match (weak, foreign, malformed) into version 0, which no listing has', () => {
    for (const header of ['W/"3"', '"abc"', '3', '"0"', '""', '"3']) {
      expect({ header, versions: ifMatchVersionsOf(withIfMatch(header)) }).toEqual({ header, versions: [0] });
    }
  });
});
