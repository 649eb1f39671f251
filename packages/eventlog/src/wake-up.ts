import { pause } from './timing.js';

/**
 * A wake-up call for an idle reader. `wait` takes the generation seen before the reader last looked, so a call
 * that came in between (while it was reading) is not lost: the wait then returns at once.
 */
export class WakeUp {
  private current = 0;
  private readonly waiters = new Set<AbortController>();

  get generation(): number {
    return this.current;
  }

  notify(): void {
    this.current++;
    for (const waiter of this.waiters) waiter.abort();
    this.waiters.clear();
  }

  /** Resolves on a call newer than `seen`, after `timeoutMs`, or when `signal` aborts, whichever comes first. */
  async wait(seen: number, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.current !== seen || signal.aborted) return;
    const waiter = new AbortController();
    const stop = (): void => waiter.abort();
    signal.addEventListener('abort', stop, { once: true });
    this.waiters.add(waiter);
    try {
      await pause(timeoutMs, waiter.signal);
    } finally {
      this.waiters.delete(waiter);
      signal.removeEventListener('abort', stop);
    }
  }
}
