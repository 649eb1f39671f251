import type { Database } from '@marketplace/database';
import type { Mailer } from '@marketplace/mailer';
import type { Clock, Logger } from '@marketplace/platform';
import type { StalenessTables } from '../adapters/staleness.tables.js';
import { staleCutoff, stalenessReminder } from '../domain/staleness.js';

export interface StalenessDependencies {
  readonly db: Database;
  readonly tables: StalenessTables;
  readonly mailer: Mailer;
  readonly clock: Clock;
  readonly logger: Logger;
  /** `{base_url}` of the listing links in the emails. */
  readonly publicBaseUrl: string;
  /** A claim not marked sent after this long is taken again (its run crashed or its send failed); default 10 min. */
  readonly reclaimAfterMs?: number;
  /** Periods handled per query; default 100. */
  readonly batchSize?: number;
}

const DEFAULT_RECLAIM_AFTER_MS = 10 * 60 * 1_000;
const DEFAULT_BATCH_SIZE = 100;

/**
 * One pass of the staleness job: every listing stale at the clock's now gets one email to its seller per stale
 * period. Each reminder is claimed (a committed row) before the send and marked sent after it:
 * - replicas racing on a period: the claim's primary key lets one of them send;
 * - a failed send, or a crash between claim and send: the claim expires after `reclaimAfterMs` and a later pass
 *   sends it;
 * - a crash between send and mark: the same, so the seller may get the reminder twice. We chose at least once
 *   over at most once (a seller who never hears about a stale listing is the failure that matters), and the
 *   repeat carries the same Message-ID, so mail clients and the `.eml` store recognise it.
 * Resolves to the number of emails sent.
 */
export const runStalenessCheck = async (deps: StalenessDependencies): Promise<number> => {
  const reclaimAfterMs = deps.reclaimAfterMs ?? DEFAULT_RECLAIM_AFTER_MS;
  const batchSize = deps.batchSize ?? DEFAULT_BATCH_SIZE;
  const startedAt = deps.clock.now();
  const cutoff = staleCutoff(startedAt);
  const messageDomain = new URL(deps.publicBaseUrl).hostname;
  let sent = 0;
  // A period that failed to send stays claimed until reclaimAfterMs, so the next query skips it: no endless loop.
  for (;;) {
    const due = await deps.tables.due(deps.db, cutoff, startedAt - reclaimAfterMs, batchSize);
    for (const period of due) {
      const now = deps.clock.now();
      if (!(await deps.tables.claim(deps.db, period, now, now - reclaimAfterMs))) continue;
      const listingUrl = `${deps.publicBaseUrl}/api/ucp/catalog/products/${period.productId}`;
      const reminder = stalenessReminder({
        period,
        listingName: period.listingName,
        sellerName: period.sellerName,
        listingUrl,
        messageDomain,
      });
      try {
        await deps.mailer.send({ to: period.sellerEmail, ...reminder });
      } catch (error) {
        deps.logger.warn(
          { err: error, productId: period.productId },
          'staleness reminder not sent; retried later',
        );
        continue;
      }
      await deps.tables.markSent(deps.db, period, deps.clock.now());
      sent++;
    }
    if (due.length < batchSize) return sent;
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
        (sent) => {
          if (sent > 0) options.logger.info({ sent }, 'staleness reminders sent');
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
