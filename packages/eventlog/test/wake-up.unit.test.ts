import { describe, expect, it } from '@jest/globals';
import { WakeUp } from '../src/wake-up.js';

const HOUR = 3_600_000;

describe('WakeUp', () => {
  it('returns at once for a call that came after the generation seen, and waits for one that came before', async () => {
    const wakeUp = new WakeUp();
    const seen = wakeUp.generation;
    wakeUp.notify();
    await wakeUp.wait(seen, HOUR, new AbortController().signal);
    const second = await Promise.race([
      wakeUp.wait(wakeUp.generation, 20, new AbortController().signal).then(() => 'timed out'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5)),
    ]);
    expect(second).toBe('still waiting');
  });

  it('wakes every waiter when called', async () => {
    const wakeUp = new WakeUp();
    const waiting = [1, 2].map(() => wakeUp.wait(wakeUp.generation, HOUR, new AbortController().signal));
    wakeUp.notify();
    await expect(Promise.all(waiting)).resolves.toEqual([undefined, undefined]);
  });

  it('wakes a waiter when its signal aborts, or when the time is up', async () => {
    const wakeUp = new WakeUp();
    const stop = new AbortController();
    const waiting = wakeUp.wait(wakeUp.generation, HOUR, stop.signal);
    stop.abort();
    await expect(waiting).resolves.toBeUndefined();
    const started = Date.now();
    await wakeUp.wait(wakeUp.generation, 10, new AbortController().signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(9);
  });
});
