import { describe, expect, it } from '@jest/globals';
import { assertValidAppend } from '../src/append-request.validation.js';
import type { AppendRequest } from '../src/index.js';

const valid: AppendRequest = {
  streamId: 'product_1',
  streamType: 'listing',
  expectedVersion: 'no_stream',
  events: [{ type: 'ListingCreated', data: {} }],
  metadata: {},
  now: 0,
};

describe('assertValidAppend', () => {
  it('accepts what the relay can publish', () => {
    expect(() => assertValidAppend(valid)).not.toThrow();
    expect(() => assertValidAppend({ ...valid, expectedVersion: 4 })).not.toThrow();
    expect(() => assertValidAppend({ ...valid, expectedVersion: 'any' })).not.toThrow();
  });

  it.each([
    ['an empty stream id', { streamId: '' }, /invalid stream id/],
    ['a stream id with a line break', { streamId: 'product_1\nx' }, /invalid stream id/],
    ['a stream id with surrounding space', { streamId: ' product_1' }, /invalid stream id/],
    ['a stream id longer than a log key may be', { streamId: 'p'.repeat(1025) }, /invalid stream id/],
    ['a stream id with a NUL', { streamId: 'product_1\u0000' }, /invalid stream id/],
    ['a stream id with a lone surrogate', { streamId: 'product_\ud800' }, /invalid stream id/],
    ['a stream type that cannot name a topic', { streamType: 'Listing.v2' }, /invalid stream type/],
    ['a negative expected version', { expectedVersion: -1 }, /invalid expected version/],
    ['a fractional expected version', { expectedVersion: 1.5 }, /invalid expected version/],
    [
      'an event type that cannot end a CloudEvents type',
      { events: [{ type: 'listing created', data: {} }] },
      /invalid event type/,
    ],
    ['an event without data', { events: [{ type: 'ListingCreated', data: undefined }] }, /has no data/],
    ['a time that is not a number', { now: Number.NaN }, /invalid append time/],
  ] as const)('refuses %s', (_case, change, message) => {
    expect(() => assertValidAppend({ ...valid, ...change })).toThrow(message);
  });
});
