import { setTimeout as sleep } from 'node:timers/promises';

/** How long the work a load caused may take to finish after it before the run counts as failed. */
export const DRAIN_TIMEOUT_MS = 120_000;

/** How far the work behind a load (emails written, listings in the catalog) had gone, and when it was done. */
export interface Drain {
  readonly expected: number;
  /** Done when the load ended. */
  readonly doneWhenLoadEnded: number;
  /** Done when the wait ended: `expected` or more unless it timed out. */
  readonly done: number;
  /** Seconds from the load's end until `expected` was reached (or the timeout). */
  readonly drainSeconds: number;
  /** False: the timeout ran out first; the figures through the drain leave the rest out. */
  readonly complete: boolean;
}

export interface DrainOptions {
  /** How much of the work is done so far (e.g. the emails the capture received). */
  readonly count: () => Promise<number>;
  readonly expected: number;
  /** When the load ended, in `now`'s time. */
  readonly loadEnded: number;
  readonly timeoutMs?: number;
  readonly pollMs?: number;
  readonly now?: () => number;
  readonly wait?: (ms: number) => Promise<unknown>;
}

/**
 * Waits until `count` reaches `expected`, looking every `pollMs`, at most `timeoutMs` after the load's end: the
 * end of the window through which the CPU of everything the load caused is counted (bench/README.md, "CPU per
 * operation: how it is measured").
 */
export const waitForDrain = async ({
  count,
  expected,
  loadEnded,
  timeoutMs = DRAIN_TIMEOUT_MS,
  pollMs = 100,
  now = () => performance.now(),
  wait = sleep,
}: DrainOptions): Promise<Drain> => {
  const doneWhenLoadEnded = await count();
  let done = doneWhenLoadEnded;
  while (done < expected && now() - loadEnded < timeoutMs) {
    await wait(pollMs);
    done = await count();
  }
  return {
    expected,
    doneWhenLoadEnded,
    done,
    drainSeconds: Math.round((now() - loadEnded) / 100) / 10,
    complete: done >= expected,
  };
};

/** The message a scenario records as `failed` when its drain timed out; undefined when it completed. */
export const drainFailure = (what: string, drain: Drain): string | undefined =>
  drain.complete
    ? undefined
    : `${drain.done} of ${drain.expected} ${what} ${drain.drainSeconds} s after the load: the CPU through the drain leaves the rest out`;
