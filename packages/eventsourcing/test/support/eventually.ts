import { setTimeout as sleep } from 'node:timers/promises';

/** Retries `check` (an expectation that throws until it holds) every 10 ms for up to `timeoutMs`. */
export const eventually = async <T>(check: () => T | Promise<T>, timeoutMs = 5_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await sleep(10);
    }
  }
};
