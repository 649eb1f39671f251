import { describe, expect, it } from '@jest/globals';
import { WakeUp } from '../src/wake-up.js';

const HOUR = 3_600_000;

describe('WakeUp', () => {
  it('returns at once when it was rung before the wait, and only once per ring', async () => {
    const wakeUp = new WakeUp();
    wakeUp.ring();
    await wakeUp.wait(HOUR, new AbortController().signal);
    const second = await Promise.race([
      wakeUp.wait(20, new AbortController().signal).then(() => 'timed out'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5)),
    ]);
    expect(second).toBe('still waiting');
  });

  it('wakes a waiter when rung', async () => {
    const wakeUp = new WakeUp();
    const waiting = wakeUp.wait(HOUR, new AbortController().signal);
    wakeUp.ring();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('wakes a waiter when its signal aborts, or when the time is up', async () => {
    const wakeUp = new WakeUp();
    const stop = new AbortController();
    const waiting = wakeUp.wait(HOUR, stop.signal);
    stop.abort();
    await expect(waiting).resolves.toBeUndefined();
    const started = Date.now();
    await wakeUp.wait(10, new AbortController().signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(9);
  });
});
