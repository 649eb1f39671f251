import type { Logger } from '@marketplace/platform';
import type { DeliveredMessage } from './eventlog.port.js';
import { pause } from './timing.js';

/** How a member retries a message whose handler rejected: doubling delays from `initialDelayMs`, capped. */
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
  /** Aborted when the subscription closes: no further attempt starts (the running one is awaited). */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /**
   * Called every `intervalMs` while the message is in hand (handler running or waiting to retry), so the
   * broker does not hand it to another member meanwhile: a NATS in-progress ack, a Kafka heartbeat.
   */
  readonly keepAlive?: { readonly intervalMs: number; readonly beat: () => unknown };
}

export type DeliveryOutcome = 'handled' | 'abandoned';

/**
 * Calls `handler` until it resolves ('handled') or the subscription closes between attempts ('abandoned': the
 * caller must not acknowledge, so the log delivers the message again). Retrying in place, rather than handing
 * the message back to the broker, keeps the messages behind it waiting, which is what ordering per key needs.
 */
export const deliverUntilHandled = async (
  message: DeliveredMessage,
  handler: (message: DeliveredMessage) => Promise<void>,
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
        await handler(message);
        return 'handled';
      } catch (error) {
        const delayMs = retryDelayMs(retry, attempt);
        logger.warn(
          {
            err: error,
            topic: message.topic,
            partition: message.partition,
            offset: message.offset,
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
