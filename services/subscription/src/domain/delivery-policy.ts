/**
 * The retry schedule of saved-search deliveries (docs/specification.md, "Saved searches"): up to 3 retries, after 1 s, 2 s and 4 s, on 5xx and
 * 429 answers and on network errors (timeouts included). Anything else (a 4xx, a refused address) is final.
 */
export const RETRY_DELAYS_MS = [1_000, 2_000, 4_000] as const;

/** Every attempt, the first included, gives up after this long (spec: 10 s per attempt). */
export const ATTEMPT_TIMEOUT_MS = 10_000;

export type AttemptOutcome =
  | { readonly kind: 'delivered'; readonly status?: number }
  | { readonly kind: 'failed'; readonly retryable: boolean; readonly error: string };

/** The outcome of an HTTP answer to a webhook POST. */
export const outcomeOfStatus = (status: number): AttemptOutcome =>
  status >= 200 && status <= 299
    ? { kind: 'delivered', status }
    : {
        kind: 'failed',
        retryable: status === 429 || status >= 500,
        error: `the receiver answered ${status}`,
      };

/**
 * What happens after attempt number `attempts` (1 for the first) failed: when the next attempt is due, or
 * `undefined` when the delivery is finally failed.
 */
export const nextAttemptAt = (
  attempts: number,
  outcome: Extract<AttemptOutcome, { kind: 'failed' }>,
  now: number,
): number | undefined => {
  if (!outcome.retryable) return undefined;
  const delay = RETRY_DELAYS_MS[attempts - 1];
  return delay === undefined ? undefined : now + delay;
};
