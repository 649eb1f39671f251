/**
 * A wake-up call that is never lost: a `ring` while nobody waits is kept, and the next `wait` returns at once.
 * The relay rings it on every notification and waits on it between batches.
 */
export class WakeUp {
  #rung = false;
  #wake: (() => void) | undefined;

  ring(): void {
    this.#rung = true;
    this.#wake?.();
  }

  /** Resolves at the first ring since the previous wait, after `ms`, or when `signal` aborts. */
  async wait(ms: number, signal: AbortSignal): Promise<void> {
    if (!this.#rung && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          this.#wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener('abort', done, { once: true });
        this.#wake = done;
      });
    }
    this.#rung = false;
  }
}
