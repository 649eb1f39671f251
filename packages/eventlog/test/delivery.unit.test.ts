import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@marketplace/platform';
import type { DeliveredBatch } from '../src/eventlog.port.js';
import { deliverUntilHandled, retryDelayMs } from '../src/delivery.js';
import { withTimeout } from '../src/timing.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const batch: DeliveredBatch = {
  topic: 't.v1',
  partition: 0,
  messages: [{ topic: 't.v1', partition: 0, offset: '1', key: 'k', value: new Uint8Array(), headers: {} }],
};
const retry = { initialDelayMs: 1, maxDelayMs: 4 };

describe('retryDelayMs', () => {
  it('doubles from the initial delay up to the cap', () => {
    const policy = { initialDelayMs: 250, maxDelayMs: 30_000 };
    expect([1, 2, 3, 4, 8, 1_000].map((attempt) => retryDelayMs(policy, attempt))).toEqual([
      250, 500, 1_000, 2_000, 30_000, 30_000,
    ]);
  });
});

describe('deliverUntilHandled', () => {
  it('calls the handler again after a rejection until it resolves', async () => {
    let calls = 0;
    const outcome = await deliverUntilHandled(
      batch,
      async () => {
        if (++calls < 3) throw new Error('not yet');
      },
      { retry, signal: new AbortController().signal, logger },
    );

    expect(outcome).toBe('handled');
    expect(calls).toBe(3);
  });

  it('abandons the batch when the consumer closes between attempts', async () => {
    const closing = new AbortController();
    let calls = 0;
    const outcome = await deliverUntilHandled(
      batch,
      async () => {
        calls++;
        closing.abort();
        throw new Error('failing');
      },
      { retry: { initialDelayMs: 60_000, maxDelayMs: 60_000 }, signal: closing.signal, logger },
    );

    expect(outcome).toBe('abandoned');
    expect(calls).toBe(1);
  });

  it('keeps the batch alive while the handler runs, and stops once it is done', async () => {
    let beats = 0;
    // The handler ends once it has seen three beats (or after 5 s, which fails the test): a handler of a fixed
    // 60 ms raced the keep-alive's timer, and a loaded CI machine fired the two together (1 beat seen).
    const handler = (): Promise<void> =>
      new Promise((resolve) => {
        const started = Date.now();
        const check = setInterval(() => {
          if (beats < 3 && Date.now() - started < 5_000) return;
          clearInterval(check);
          resolve();
        }, 5);
      });
    await deliverUntilHandled(batch, handler, {
      retry,
      signal: new AbortController().signal,
      logger,
      keepAlive: { intervalMs: 10, beat: () => beats++ },
    });
    const beatsWhileHandling = beats;
    await new Promise((resolve) => setTimeout(resolve, 40));

    expect(beatsWhileHandling).toBeGreaterThanOrEqual(3);
    expect(beats).toBe(beatsWhileHandling);
  });

  it('survives a keep-alive that throws or rejects', async () => {
    const outcome = await deliverUntilHandled(
      batch,
      () => new Promise((resolve) => setTimeout(resolve, 30)),
      {
        retry,
        signal: new AbortController().signal,
        logger,
        keepAlive: {
          intervalMs: 5,
          beat: () => {
            throw new Error('connection closed');
          },
        },
      },
    );
    await deliverUntilHandled(batch, () => new Promise((resolve) => setTimeout(resolve, 30)), {
      retry,
      signal: new AbortController().signal,
      logger,
      keepAlive: { intervalMs: 5, beat: () => Promise.reject(new Error('rebalancing')) },
    });

    expect(outcome).toBe('handled');
  });
});

describe('withTimeout', () => {
  it('passes a timely result through and rejects a late one', async () => {
    await expect(withTimeout(Promise.resolve(7), 50, 'quick work')).resolves.toBe(7);
    await expect(withTimeout(new Promise(() => {}), 10, 'slow work')).rejects.toThrow(
      'slow work did not finish within 10 ms',
    );
  });

  it('reports a failure that comes after the timeout', async () => {
    const late: unknown[] = [];
    const work = new Promise((_, reject) => setTimeout(() => reject(new Error('late')), 30));
    await expect(withTimeout(work, 5, 'work', (error) => late.push(error))).rejects.toThrow(/within 5 ms/);
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(late).toEqual([new Error('late')]);
  });
});
