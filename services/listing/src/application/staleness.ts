import type { Database, Queryable } from '@marketplace/database';
import type { OutgoingMailTable } from '@marketplace/outgoing-mail';
import type { Clock, Logger } from '@marketplace/platform';
import { staleCutoff, stalenessReminder } from '../domain/staleness.js';

/** A listing whose availability was last confirmed in a period now stale, with whom to remind. */
export interface DueReminder {
  readonly productId: string;
  readonly confirmedAt: number;
  readonly listingName: string;
  readonly sellerName: string;
  readonly sellerEmail: string;
}

/** The stale periods, and the record of the reminders queued for them. */
export interface StalenessReminders {
  /** Periods stale at `cutoff` whose reminder is not queued yet, oldest first. */
  due(q: Queryable, cutoff: number, limit: number): Promise<DueReminder[]>;
  /** Records the periods whose reminder `tx` queues; resolves to those recorded now (not by another replica). */
  recordQueued<P extends { readonly productId: string; readonly confirmedAt: number }>(
    tx: Queryable,
    periods: readonly P[],
    now: number,
  ): Promise<P[]>;
}

export interface StalenessDependencies {
  readonly db: Database;
  readonly tables: StalenessReminders;
  /** Where the reminders are queued; the outgoing-mail worker sends them (`@marketplace/outgoing-mail`). */
  readonly outgoingMail: OutgoingMailTable;
  readonly clock: Clock;
  /** `{base_url}` of the listing links in the emails. */
  readonly publicBaseUrl: string;
  /** Periods handled per transaction; default 100. */
  readonly batchSize?: number;
}

const DEFAULT_BATCH_SIZE = 100;

/**
 * One pass of the staleness job: every listing stale at the clock's now gets one email to its seller per stale
 * period. Each batch of due periods is recorded and its emails queued in one transaction, with no network I/O;
 * the outgoing-mail worker sends them after the commit (at least once, retried with backoff, the same
 * Message-ID on a repeat: a seller who never hears about a stale listing is the failure that matters).
 * Replicas racing on a period: the period's primary key lets one of them queue it.
 * Resolves to the number of reminders queued.
 */
export const runStalenessCheck = async (deps: StalenessDependencies): Promise<number> => {
  const batchSize = deps.batchSize ?? DEFAULT_BATCH_SIZE;
  const cutoff = staleCutoff(deps.clock.now());
  const messageDomain = new URL(deps.publicBaseUrl).hostname;
  let queued = 0;
  for (;;) {
    const due = await deps.tables.due(deps.db, cutoff, batchSize);
    queued += await deps.db.transaction(async (tx) => {
      const now = deps.clock.now();
      const recorded = await deps.tables.recordQueued(tx, due, now);
      const reminders = recorded.map((period) => ({
        to: period.sellerEmail,
        ...stalenessReminder({
          period,
          listingName: period.listingName,
          sellerName: period.sellerName,
          listingUrl: `${deps.publicBaseUrl}/api/ucp/catalog/products/${period.productId}`,
          messageDomain,
        }),
      }));
      await deps.outgoingMail.enqueue(tx, reminders, now);
      return reminders.length;
    });
    if (due.length < batchSize) return queued;
  }
};

export interface StalenessSchedule {
  stop(): Promise<void>;
}

/**
 * Runs the check at start and then every `intervalMs` (one pass at a time; a pass that fails is logged and the
 * next one tries again). `stop()` cancels the timer and waits for the pass in hand.
 */
export const scheduleStalenessCheck = (
  run: () => Promise<number>,
  options: { readonly intervalMs: number; readonly logger: Logger },
): StalenessSchedule => {
  let running: Promise<void> | undefined;
  const pass = (): void => {
    running ??= run()
      .then(
        (queued) => {
          if (queued > 0) options.logger.info({ queued }, 'staleness reminders queued');
        },
        (error: unknown) => options.logger.error({ err: error }, 'staleness check failed'),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(pass, options.intervalMs);
  timer.unref();
  pass();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
};
