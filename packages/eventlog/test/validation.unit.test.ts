import { describe, expect, it } from '@jest/globals';
import {
  assertDuration,
  assertGroup,
  assertMessages,
  assertPartitions,
  assertTopic,
} from '../src/validation.js';

const message = (overrides: object = {}) => ({
  key: 'k',
  value: new Uint8Array(),
  headers: {},
  ...overrides,
});

describe('names', () => {
  it('accepts dot-separated topic tokens and single-token groups', () => {
    expect(() => assertTopic('marketplace.listing.v1')).not.toThrow();
    expect(() => assertTopic('ns_1.marketplace-x.v1')).not.toThrow();
    expect(() => assertGroup('catalog-projection_2')).not.toThrow();
  });

  it.each(['', 'a..b', '.a', 'a.', 'has space', 'a*', 'a>b', 'x'.repeat(201)])(
    'refuses the topic %j',
    (topic) => {
      expect(() => assertTopic(topic)).toThrow(/invalid topic/);
    },
  );

  it.each(['', 'a.b', '-a', 'a b', 'x'.repeat(65)])('refuses the group %j', (group) => {
    expect(() => assertGroup(group)).toThrow(/invalid consumer group/);
  });

  it.each([0, -1, 1.5, 86_400_001, Number.NaN])('refuses a duration of %p ms', (ms) => {
    expect(() => assertDuration('ackWaitMs', ms)).toThrow(/invalid ackWaitMs/);
  });

  it('refuses a duration below its minimum', () => {
    expect(() => assertDuration('pullExpiresMs', 999, 1_000)).toThrow(/from 1000/);
    expect(() => assertDuration('pullExpiresMs', 1_000, 1_000)).not.toThrow();
  });

  it.each([0, -1, 1.5, 1025, Number.NaN])('refuses %p partitions', (partitions) => {
    expect(() => assertPartitions(partitions)).toThrow(/invalid partition count/);
  });
});

describe('messages', () => {
  it('accepts CloudEvents headers and binary values', () => {
    expect(() =>
      assertMessages('t.v1', [
        message({
          value: new Uint8Array([0, 255]),
          headers: { ce_id: 'e-1', traceparent: '00-ab-cd-01', 'x.y': '' },
        }),
      ]),
    ).not.toThrow();
  });

  it.each([
    [{ key: '' }, /key must be/],
    [{ key: ' padded' }, /key must be/],
    [{ key: 'a\nb' }, /key must be/],
    [{ value: 'text' }, /value must be a Uint8Array/],
    [{ headers: null }, /headers must be an object/],
    [{ headers: { 'bad name': 'v' } }, /invalid header name/],
    [{ headers: { ce_id: 'line\r\nbreak' } }, /header ce_id/],
    [{ headers: { ce_id: 'trailing ' } }, /header ce_id/],
    [{ headers: { ce_id: 42 } }, /header ce_id/],
  ])('refuses a message with %j', (overrides, error) => {
    expect(() => assertMessages('t.v1', [message(overrides)])).toThrow(error);
  });

  it('names the offending message', () => {
    expect(() => assertMessages('t.v1', [message(), message({ key: '' })])).toThrow(/message 1 for t.v1/);
  });
});
