import { describe, expect, it } from '@jest/globals';
import { StockTally } from '../src/order/stock-tally.js';

describe('StockTally', () => {
  it('counts answered and failed orders per listing and passes the outcome on', async () => {
    const tally = new StockTally();
    await expect(tally.record('a', Promise.resolve('order 1'))).resolves.toBe('order 1');
    await tally.record('a', Promise.resolve('order 2'));
    await expect(tally.record('a', Promise.reject(new Error('request timed out')))).rejects.toThrow(
      'request timed out',
    );
    await tally.record('b', Promise.resolve('order 3'));
    expect(tally.listings()).toEqual(['a', 'b']);
    expect(tally.totals()).toEqual({ answered: 3, failed: 1 });
  });

  it('expects every answered order sold and each failed one possibly sold', async () => {
    const tally = new StockTally();
    await tally.record('a', Promise.resolve());
    await tally.record('a', Promise.resolve());
    await tally.record('a', Promise.reject(new Error('status 500'))).catch(() => undefined);
    expect(tally.expectedLeft('a', 100)).toEqual({ atMost: 98, atLeast: 97 });
    expect(tally.expectedLeft('never bought', 100)).toEqual({ atMost: 100, atLeast: 100 });
  });
});
