import { unavailable } from '@marketplace/platform';
import { setTimeout as sleep } from 'node:timers/promises';
import { sqlStateOf, type Queryable } from './database.port.js';

export interface WaitForDatabaseOptions {
  /** Gives up after this long with an `unavailable` AppError naming the last failure. */
  readonly timeoutMs: number;
}

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 2_000;

/** Retrying will not fix a wrong password or a database that does not exist: those fail at once. */
const isPermanent = (error: unknown): boolean => {
  const sqlState = sqlStateOf(error);
  return sqlState !== undefined && (sqlState.startsWith('28') || sqlState === '3D000');
};

/** The failure's message, and its cause's (the driver's own words behind an `unavailable` AppError). */
const describeFailure = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  // Duck-typed: the driver's errors may come from another realm (jest's module VM).
  const cause: unknown = error.cause;
  const causeMessage =
    typeof cause === 'object' && cause !== null && 'message' in cause ? String(cause.message) : undefined;
  return causeMessage === undefined ? error.message : `${error.message}: ${causeMessage}`;
};

/** Runs `attempt`, failing when it has not settled after `ms`; a late settlement is ignored. */
const within = async <T>(attempt: Promise<T>, ms: number): Promise<T> => {
  const timeout = new AbortController();
  const timedOut = sleep(ms, undefined, { signal: timeout.signal }).then(() => {
    throw new Error(`no answer within ${ms} ms`);
  });
  timedOut.catch(() => undefined);
  try {
    return await Promise.race([attempt, timedOut]);
  } finally {
    timeout.abort();
  }
};

/**
 * Resolves once the database answers `select 1`, retrying with exponential backoff, so a service started
 * before PostgreSQL waits for it instead of crashing. The embedded engine answers at once.
 */
export const waitForDatabase = async (
  db: Queryable,
  { timeoutMs }: WaitForDatabaseOptions,
): Promise<void> => {
  const giveUpAt = Date.now() + timeoutMs;
  let delayMs = FIRST_DELAY_MS;
  let lastFailure = 'no answer';
  for (;;) {
    const attempt = db.query('select 1');
    attempt.catch(() => undefined);
    try {
      await within(attempt, Math.max(1, giveUpAt - Date.now()));
      return;
    } catch (error) {
      if (isPermanent(error)) throw error;
      lastFailure = describeFailure(error);
    }
    const remainingMs = giveUpAt - Date.now();
    if (remainingMs <= 0) break;
    await sleep(Math.min(delayMs, remainingMs));
    delayMs = Math.min(delayMs * 2, MAX_DELAY_MS);
  }
  throw unavailable(`the database did not answer within ${timeoutMs} ms; last failure: ${lastFailure}`);
};
