import type { Database } from '@marketplace/database';
import type { Mailer } from '@marketplace/mailer';
import type { Clock, Logger } from '@marketplace/platform';
import type { ClaimedMail, OutgoingMailTable } from './outgoing-mail.table.js';

/** Waits after the 1st, 2nd, ... failed attempt; the last one repeats: a message is never given up. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  30_000,
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  60 * 60_000,
];

/** The wait after the `attempts`-th failed attempt (1-based). */
export const retryDelayAfter = (attempts: number, delaysMs: readonly number[]): number => {
  const delay = delaysMs[Math.min(Math.max(attempts, 1), delaysMs.length) - 1];
  if (delay === undefined) throw new Error('retry delays must not be empty');
  return delay;
};

const MIN_PAUSE_MS = 10;
const PURGE_INTERVAL_MS = 60 * 60_000;

export interface OutgoingMailWorkerOptions {
  readonly db: Database;
  readonly table: OutgoingMailTable;
  readonly mailer: Mailer;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Messages claimed (and sent concurrently) at a time; default 16. */
  readonly batchSize?: number;
  /**
   * How long a claimed message keeps its row before another worker may take it (this one died mid-send):
   * longer than a send may last (the SMTP mailer bounds each wait to 10 s). Default 60 s.
   */
  readonly leaseMs?: number;
  /** How often the queue is looked at without a wake-up (mail queued by other replicas); default 2 s. */
  readonly pollMs?: number;
  /**
   * How long the worker lets mail gather after a wake-up, or after a claim that was not full, before its next
   * statement: the mail committed meanwhile shares one claim, and the sends one mark, instead of a statement or
   * two per committing transaction. Default 100 ms, a delay no reader of an email notices.
   */
  readonly gatherMs?: number;
  /** Default DEFAULT_RETRY_DELAYS_MS. */
  readonly retryDelaysMs?: readonly number[];
  /** How long a sent message is kept before the loop deletes it (checked hourly); default 7 days. */
  readonly keepSentMs?: number;
  /** False: no background loop, only `processDue()` calls (tests that drive a virtual clock); default true. */
  readonly runLoop?: boolean;
}

export interface OutgoingMailWorker {
  /** Mail was queued and committed in this process: look at the queue now. */
  wake(): void;
  /** Claims what is due now (one batch), sends it, records the outcomes; resolves to the number sent. */
  processDue(): Promise<number>;
  /** Stops claiming and waits for the sends in flight. */
  stop(): Promise<void>;
}

/**
 * Sends the queued mail of one schema: claims due messages (one statement, committed before any send), sends
 * them with no transaction open, then marks each sent (with the next claim, in the same statement) or due again
 * after a backoff. Sleeps until the next message is due, a wake-up, or the poll interval.
 */
export const startOutgoingMailWorker = (options: OutgoingMailWorkerOptions): OutgoingMailWorker => {
  const { db, table, mailer, clock, logger } = options;
  const batchSize = options.batchSize ?? 16;
  const leaseMs = options.leaseMs ?? 60_000;
  const pollMs = options.pollMs ?? 2_000;
  const retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const keepSentMs = options.keepSentMs ?? 7 * 24 * 60 * 60_000;
  let purgedAt = Number.NEGATIVE_INFINITY;
  let stopped = false;
  const gatherMs = options.gatherMs ?? 100;
  // A wake-up since the pass began is kept, so mail committed during a claim is not left to the poll.
  let woken = false;
  let endWait: ((cause: 'woken' | 'stopped') => void) | undefined;

  const attempt = async ({ message, attempts }: ClaimedMail): Promise<boolean> => {
    try {
      await mailer.send(message);
    } catch (error) {
      const retryAt = clock.now() + retryDelayAfter(attempts, retryDelaysMs);
      await table.retryLater(db, message.messageId, (error as Error).message, retryAt);
      logger.warn(
        { err: error, messageId: message.messageId, attempts, retryAt },
        'email not sent; retrying',
      );
      return false;
    }
    return true;
  };

  /** Records `sent` (the previous claim's sends) and claims due mail in one statement, then sends what it claimed. */
  const cycle = async (sent: readonly string[]) => {
    const { claimed, nextDueAt } = await table.markSentAndClaimDue(db, sent, clock.now(), batchSize, leaseMs);
    const outcomes = await Promise.all(
      claimed.map((mail) =>
        attempt(mail).catch((error: unknown) => {
          // The row stays claimed; the lease makes it due again.
          logger.error(
            { err: error, messageId: mail.message.messageId },
            'recording an email attempt failed',
          );
          return false;
        }),
      ),
    );
    return {
      claimed: claimed.length,
      sent: claimed.filter((_, i) => outcomes[i]).map((mail) => mail.message.messageId),
      nextDueAt,
    };
  };

  /**
   * Records sends in one statement however many. Unrecorded (this fails, or the process dies first), a sent
   * message is due again after its lease and sent once more: mail is at least once (docs/architecture.md,
   * "Outgoing mail").
   */
  const record = async (sent: readonly string[]): Promise<boolean> => {
    try {
      await table.markSent(db, sent, clock.now());
      return true;
    } catch (error) {
      logger.error({ err: error, messageIds: sent }, 'recording sent emails failed');
      return false;
    }
  };

  const processDue = async (): Promise<number> => {
    const { sent } = await cycle([]);
    return (await record(sent)) ? sent.length : 0;
  };

  /** Waits `ms` or less: `stop()` ends any wait, a wake-up only one `untilWoken`. */
  const wait = (ms: number, untilWoken: boolean): Promise<void> => {
    if (stopped || (untilWoken && woken)) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        endWait = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      endWait = (cause) => {
        if (cause === 'stopped' || untilWoken) finish();
      };
    });
  };

  const loop = async (): Promise<void> => {
    // Sent and not recorded yet: the next pass's statement records them along with its claim, so a worker
    // spends one statement per batch.
    let unrecorded: readonly string[] = [];
    while (!stopped) {
      try {
        woken = false;
        const pass = await cycle(unrecorded);
        unrecorded = pass.sent;
        if (clock.now() - purgedAt >= PURGE_INTERVAL_MS) {
          purgedAt = clock.now();
          await table.purgeSentBefore(db, purgedAt - keepSentMs);
        }
        // A full claim: more is due, at once.
        if (pass.claimed === batchSize) continue;
        if (unrecorded.length === 0) {
          const untilDue = pass.nextDueAt === undefined ? pollMs : pass.nextDueAt - clock.now();
          // At least a few ms: a due row another replica is claiming right now must not spin this loop.
          await wait(Math.min(Math.max(untilDue, MIN_PAUSE_MS), pollMs), true);
          // A row came due, or the poll: nothing says more is on its way.
          if (!woken) continue;
        }
        // Mail was committed, or sends wait to be recorded: the next statement takes what commits meanwhile too.
        await wait(gatherMs, false);
      } catch (error) {
        logger.error({ err: error }, 'outgoing mail loop failed; retrying');
        await wait(pollMs, true);
      }
    }
    await record(unrecorded);
  };
  const running = options.runLoop === false ? Promise.resolve() : loop();

  const wake = (): void => {
    woken = true;
    endWait?.('woken');
  };
  return {
    wake,
    processDue,
    stop: async () => {
      stopped = true;
      endWait?.('stopped');
      await running;
    },
  };
};
