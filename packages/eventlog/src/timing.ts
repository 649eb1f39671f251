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

/** Waits for `work` at most `ms`; resolves `false` if time ran out first (the work is left to finish alone). */
export const settlesWithin = async (work: Promise<unknown>, ms: number): Promise<boolean> => {
  const timer = new AbortController();
  try {
    return await Promise.race([work.then(() => true), pause(ms, timer.signal).then(() => false)]);
  } finally {
    timer.abort();
  }
};
