import { describe, expect, it } from '@jest/globals';
import { partitionOf } from '../src/eventlog.port.js';
import { durableNameOf, streamNameOf, subjectOf } from '../src/nats.event-log.js';
import { WakeUp } from '../src/wake-up.js';

describe('partitions', () => {
  it('maps a key to the same partition every time, spreading keys over all partitions', () => {
    const keys = Array.from({ length: 1_000 }, (_, i) => `listing-${i}`);
    const counts = new Array<number>(8).fill(0);
    for (const key of keys) counts[partitionOf(key, 8)]!++;

    expect(keys.map((key) => partitionOf(key, 8))).toEqual(keys.map((key) => partitionOf(key, 8)));
    expect(Math.min(...counts)).toBeGreaterThan(80);
  });
});

describe('NATS names', () => {
  it('derives stream, subject and durable consumer names from topic, partition and group', () => {
    expect(streamNameOf('marketplace.listing.v1')).toBe('MARKETPLACE_LISTING_V1');
    expect(subjectOf('marketplace.listing.v1', 3)).toBe('marketplace.listing.v1.3');
    expect(durableNameOf('catalog', 3)).toBe('catalog-p3');
  });
});

describe('WakeUp', () => {
  it('returns at once for a call that came while the reader was looking', async () => {
    const wake = new WakeUp();
    const seen = wake.generation;
    wake.notify();
    const started = Date.now();
    await wake.wait(seen, 10_000, new AbortController().signal);

    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('wakes a waiting reader on a call, else after the timeout or on abort', async () => {
    const wake = new WakeUp();
    const waiting = wake.wait(wake.generation, 10_000, new AbortController().signal);
    wake.notify();
    await waiting;

    const started = Date.now();
    await wake.wait(wake.generation, 20, new AbortController().signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);

    const closing = new AbortController();
    const aborted = wake.wait(wake.generation, 10_000, closing.signal);
    closing.abort();
    await aborted;
  });
});
