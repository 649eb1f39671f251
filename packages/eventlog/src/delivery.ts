import type { Logger } from '@marketplace/platform';
import type { DeliveredBatch } from './eventlog.port.js';
import { pause } from './timing.js';

/** How a member retries a batch whose handler rejected: doubling delays from `initialDelayMs`, capped. */
export interface RetryPolicy {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { initialDelayMs: 250, maxDelayMs: 30_000 };

/** The delay before retry number `attempt` (1 for the first retry). */
export const retryDelayMs = (policy: RetryPolicy, attempt: number): number =>
  Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(attempt - 1, 30));

export interface DeliveryOptions {
  readonly retry: RetryPolicy;
  /** Aborted when the consumer closes: no further attempt starts (the running one is awaited). */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /**
   * Called every `intervalMs` while the batch is in hand (handler running or waiting to retry), so the
   * broker does not hand it to another member meanwhile: a NATS in-progress ack, a Kafka heartbeat.
   */
  readonly keepAlive?: { readonly intervalMs: number; readonly beat: () => unknown };
}

export type DeliveryOutcome = 'handled' | 'abandoned';

/**
 * Calls `handler` until it resolves ('handled') or the consumer closes between attempts ('abandoned': the
 * caller must not acknowledge, so the log delivers the batch again). Retrying in place, rather than handing
 * the batch back to the broker, keeps the messages behind it waiting, which is what ordering per key needs.
 */
export const deliverUntilHandled = async (
  batch: DeliveredBatch,
  handler: (batch: DeliveredBatch) => Promise<void>,
  { retry, signal, logger, keepAlive }: DeliveryOptions,
): Promise<DeliveryOutcome> => {
  const beat = (): void => {
    try {
      Promise.resolve(keepAlive?.beat()).catch((error: unknown) =>
        logger.debug({ err: error }, 'keep-alive failed'),
      );
    } catch (error) {
      logger.debug({ err: error }, 'keep-alive failed');
    }
  };
  const timer = keepAlive ? setInterval(beat, keepAlive.intervalMs) : undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await handler(batch);
        return 'handled';
      } catch (error) {
        const delayMs = retryDelayMs(retry, attempt);
        logger.warn(
          {
            err: error,
            topic: batch.topic,
            partition: batch.partition,
            offsets: `${batch.messages[0]?.offset}-${batch.messages.at(-1)?.offset}`,
            attempt,
            delayMs,
          },
          'event handler failed; retrying',
        );
        if (!(await pause(delayMs, signal))) return 'abandoned';
      }
    }
  } finally {
    clearInterval(timer);
  }
};
