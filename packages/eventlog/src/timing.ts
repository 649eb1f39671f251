import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves `true` after `ms`, or `false` as soon as `signal` aborts. */
export const pause = async (ms: number, signal: AbortSignal): Promise<boolean> => {
  if (signal.aborted) return false;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch (error) {
    if (signal.aborted) return false;
    throw error;
  }
};

export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * Settles like `work`, or rejects with a TimeoutError after `ms`. The work itself cannot be cancelled: it goes
 * on alone, and a late rejection of it is passed to `onLateFailure` instead of going unhandled.
 */
export const withTimeout = async <T>(
  work: Promise<T>,
  ms: number,
  what: string,
  onLateFailure: (error: unknown) => void = () => {},
): Promise<T> => {
  const timer = new AbortController();
  let timedOut = false;
  try {
    return await Promise.race([
      work,
      pause(ms, timer.signal).then((elapsed) => {
        if (!elapsed) return new Promise<never>(() => {});
        timedOut = true;
        throw new TimeoutError(`${what} did not finish within ${ms} ms`);
      }),
    ]);
  } catch (error) {
    if (timedOut) work.catch(onLateFailure);
    throw error;
  } finally {
    timer.abort();
  }
};
