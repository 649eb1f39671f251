import type { Logger } from '@marketplace/platform';
import { setTimeout as sleep } from 'node:timers/promises';

export interface StartupRetryOptions {
  /** Gives up (rethrowing the last failure) once this much time has passed. */
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** What is being waited for, for the log lines: `the event log (nats)`. */
  readonly what: string;
  /** First delay; doubles up to `maxDelayMs`. */
  readonly firstDelayMs?: number;
  readonly maxDelayMs?: number;
}

/**
 * Retries `attempt` with exponential backoff until it succeeds or `timeoutMs` passed, so a pod that starts
 * before its broker waits for it instead of crashing into CrashLoopBackOff.
 */
export const retryDuringStartup = async <T>(
  attempt: () => Promise<T>,
  { timeoutMs, logger, what, firstDelayMs = 250, maxDelayMs = 5_000 }: StartupRetryOptions,
): Promise<T> => {
  const giveUpAt = Date.now() + timeoutMs;
  let delayMs = firstDelayMs;
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt();
    } catch (error) {
      const remainingMs = giveUpAt - Date.now();
      if (remainingMs <= 0) throw error;
      logger.warn({ err: error, attempts, delayMs }, `waiting for ${what}`);
      await sleep(Math.min(delayMs, remainingMs));
      delayMs = Math.min(delayMs * 2, maxDelayMs);
    }
  }
};
