import { setTimeout as sleep } from 'node:timers/promises';

/** Waits `ms`, or less when `signal` aborts (it never rejects). */
export const pause = async (ms: number, signal: AbortSignal): Promise<void> => {
  await sleep(ms, undefined, { signal }).catch(() => undefined);
};

export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** Rejects with TimeoutError when `work` has not settled after `ms` (the work itself is left to finish alone). */
export const withTimeout = async <T>(work: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
};
