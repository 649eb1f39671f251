import type { Logger } from '@marketplace/platform';

export interface PeriodicJob {
  /** Runs a pass now unless one is running (e.g. after a write that made work due). */
  poke(): void;
  /** No new passes; resolves once the pass in progress has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` at once and then every `intervalMs`, never two passes at a time in this process (replicas must make
 * their passes idempotent). A failed pass is logged and the next one tries again; the timer never keeps the
 * process alive.
 */
export const schedulePeriodicJob = (
  name: string,
  pass: () => Promise<unknown>,
  options: { readonly intervalMs: number; readonly logger: Logger },
): PeriodicJob => {
  let running: Promise<void> | undefined;
  let stopped = false;
  const poke = (): void => {
    if (stopped) return;
    running ??= pass()
      .then(
        () => undefined,
        (error: unknown) => options.logger.error({ err: error, job: name }, 'periodic job failed'),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(poke, options.intervalMs);
  timer.unref();
  poke();
  return {
    poke,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
};
