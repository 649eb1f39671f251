import type { Database } from '@marketplace/database';
import type { Clock, Logger } from '@marketplace/platform';
import type { AttemptOutcome } from '../domain/delivery-policy.js';
import { ATTEMPT_TIMEOUT_MS, nextAttemptAt, RETRY_DELAYS_MS } from '../domain/delivery-policy.js';
import type { Delivery } from './ports.js';
import type { Deliveries } from './ports.js';

/** Sends one attempt of a delivery through its channel; never throws (a failure is an outcome). */
export type DeliverySender = (delivery: Delivery) => Promise<AttemptOutcome>;

export interface DeliveryWorkerOptions {
  readonly db: Database;
  readonly deliveries: Deliveries;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly send: DeliverySender;
  /** Attempts in flight at once in this process; default 64. */
  readonly concurrency?: number;
  /**
   * How long a claimed attempt keeps its row before another worker may take it (the owner died): longer than
   * an attempt may last. Default: the attempt timeout plus 5 s.
   */
  readonly leaseMs?: number;
  /**
   * How often the queue is looked at without a wake-up or a due retry (work enqueued by other replicas, each of
   * which wakes its own worker); default 2 s.
   */
  readonly pollMs?: number;
  /** False: no background loop, only `processDue()` calls (tests that drive a virtual clock); default true. */
  readonly runLoop?: boolean;
}

export interface DeliveryWorker {
  /** Work was enqueued in this process: look at the queue now. */
  wake(): void;
  /** Claims what is due now (up to the free capacity) and resolves once those attempts finished. */
  processDue(): Promise<number>;
  /** Stops claiming and waits for the attempts in flight. */
  stop(): Promise<void>;
}

const MAX_ATTEMPTS = 1 + RETRY_DELAYS_MS.length;

/**
 * The delivery loop: claims due deliveries (SKIP LOCKED, so replicas share the queue), runs up to
 * `concurrency` attempts at once without letting a slow receiver hold back the others, records each outcome
 * and schedules retries (1 s, 2 s, 4 s). Sleeps until the next delivery is due, a wake-up, or the poll interval.
 */
export const startDeliveryWorker = (options: DeliveryWorkerOptions): DeliveryWorker => {
  const { db, deliveries, clock, logger, send } = options;
  const concurrency = options.concurrency ?? 64;
  const leaseMs = options.leaseMs ?? ATTEMPT_TIMEOUT_MS + 5_000;
  const pollMs = options.pollMs ?? 2_000;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  // A wake-up that came while the loop was busy is kept, so work enqueued during a claim is not left to the poll.
  let wokenWhileBusy = false;
  let wakeUp: (() => void) | undefined;
  const wake = (): void => {
    if (wakeUp) wakeUp();
    else wokenWhileBusy = true;
  };

  const attempt = async (delivery: Delivery): Promise<void> => {
    if (delivery.attempts > MAX_ATTEMPTS) {
      // The last attempt's worker died mid-attempt: the receiver may or may not have it; retries are spent.
      await deliveries.markAttemptFailed(
        db,
        delivery.deliveryId,
        'the last attempt was interrupted',
        undefined,
      );
      return;
    }
    let outcome: AttemptOutcome;
    try {
      outcome = await send(delivery);
    } catch (error) {
      outcome = { kind: 'failed', retryable: true, error: (error as Error).message };
    }
    const now = clock.now();
    if (outcome.kind === 'delivered') {
      await deliveries.markDelivered(db, delivery.deliveryId, now);
    } else {
      const retryAt = nextAttemptAt(delivery.attempts, outcome, now);
      await deliveries.markAttemptFailed(db, delivery.deliveryId, outcome.error, retryAt);
      logger.info(
        { deliveryId: delivery.deliveryId, attempts: delivery.attempts, error: outcome.error, retryAt },
        retryAt === undefined
          ? 'saved-search delivery failed'
          : 'saved-search delivery attempt failed; retrying',
      );
    }
  };

  const track = (delivery: Delivery): Promise<void> => {
    const running: Promise<void> = attempt(delivery)
      .catch((error: unknown) =>
        // The row stays claimed; the lease makes it due again.
        logger.error({ err: error, deliveryId: delivery.deliveryId }, 'recording a delivery attempt failed'),
      )
      .finally(() => {
        inFlight.delete(running);
        wake();
      });
    inFlight.add(running);
    return running;
  };

  const claim = async (): Promise<Promise<void>[]> => {
    const capacity = concurrency - inFlight.size;
    if (capacity <= 0) return [];
    const claimed = await deliveries.claimDue(db, clock.now(), capacity, leaseMs);
    return claimed.map(track);
  };

  const pause = async (ms: number): Promise<void> => {
    if (wokenWhileBusy || stopped) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wakeUp = undefined;
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        wokenWhileBusy = false;
        const started = await claim();
        if (started.length > 0 && inFlight.size < concurrency) continue;
        const nextDue = inFlight.size < concurrency ? await deliveries.nextDueAt(db) : undefined;
        const untilDue = nextDue === undefined ? pollMs : nextDue - clock.now();
        if (untilDue > 0) await pause(Math.min(untilDue, pollMs));
      } catch (error) {
        logger.error({ err: error }, 'saved-search delivery loop failed; retrying');
        await pause(pollMs);
      }
    }
  };
  const running = options.runLoop === false ? Promise.resolve() : loop();

  return {
    wake,
    processDue: async () => {
      const started = await claim();
      await Promise.all(started);
      return started.length;
    },
    stop: async () => {
      stopped = true;
      wakeUp?.();
      await running;
      await Promise.all(inFlight);
    },
  };
};
