import { quoteIdent, type Database } from '@marketplace/database';
import {
  DEFAULT_BATCH_INTERVAL_MS,
  DEFAULT_RETRY_POLICY,
  type EventLog,
  type LogMessage,
  pause,
  retryDelayMs,
  type RetryPolicy,
  topicOf,
  WakeUp,
  withTimeout,
} from '@marketplace/eventlog';
import { createLogger, type Logger } from '@marketplace/platform';
import type { RecordedEvent } from './event-store.port.js';
import { toLogMessage, type EventEncoder } from './outbox-message.js';
import { onEventsAppended } from './events-appended.js';
import { EVENT_COLUMNS, toRecordedEvent, type EventRow } from './events-table.js';

export interface OutboxRelayOptions {
  readonly db: Database;
  /** The schema of the event store whose events this relay publishes. */
  readonly schema: string;
  readonly log: EventLog;
  /**
   * The publishing service, e.g. `listing`: the CloudEvents source `/services/<name>`, the relay's checkpoint
   * row, and its leader lock (one active relay per schema and name).
   */
  readonly name: string;
  /** The payload of an event on the log, and its media type. */
  readonly encode: EventEncoder;
  /** The topic of an event; default `topicOf(event.streamType)`, e.g. `marketplace.listing.v1`. */
  readonly topicFor?: (event: RecordedEvent) => string;
  /** Events read and published per round; default 100. */
  readonly batchSize?: number;
  /**
   * The least time between the starts of a round that published events and the next round: a relay woken by
   * every append publishes what arrives meanwhile in one round (one read, one publish, one checkpoint) instead of
   * a round per append, at most this much later. A quiet relay's first event goes at once, and a full batch never
   * waits. Default `DEFAULT_BATCH_INTERVAL_MS`, as the consumers' (EVENT_LOG_BATCH_INTERVAL_MS); 0: a round per
   * wake-up.
   */
  readonly batchIntervalMs?: number;
  /**
   * How often to look for events when no wake-up came: appends of other processes (another replica, the CLI)
   * and late commits; default 1 s.
   */
  readonly pollIntervalMs?: number;
  /** Bound on one `log.publish`; default 30 s. A publish that times out is retried like a failed one. */
  readonly publishTimeoutMs?: number;
  /** Delays between attempts after a failed round (publish, or database); default 250 ms doubling to 30 s. */
  readonly retry?: RetryPolicy;
  /** How often a standby tries to become the active relay; default 2 s. */
  readonly standbyIntervalMs?: number;
  readonly logger?: Logger;
}

export interface OutboxRelay {
  /** How many committed events are not published yet (by any relay of this name): 0 when caught up. */
  lag(): Promise<number>;
  /**
   * Stops: what was committed by then is published and checkpointed first, the batch being gathered included;
   * a failing batch is left for the next run.
   */
  stop(): Promise<void>;
}

interface Checkpoint {
  readonly transactionId: string;
  readonly globalPosition: string;
}

const NAME = /^[a-z][a-z0-9-]{0,62}$/;

const integerAtLeast = (minimum: number, value: number, what: string): number => {
  if (!Number.isSafeInteger(value) || value < minimum)
    throw new RangeError(`${what} must be an integer of at least ${minimum}, got ${value}`);
  return value;
};
const positiveInteger = (value: number, what: string): number => integerAtLeast(1, value, what);

/**
 * Publishes the event store's events to the log, in commit order, at least once.
 *
 * Why the xmin rule: `global_position` comes from a sequence, so a transaction that appended early but commits
 * late makes its events visible *behind* events a reader may already have passed. The relay therefore reads
 * only events whose transaction is older than every transaction still running
 * (`transaction_id < pg_snapshot_xmin(pg_current_snapshot())`): those transactions have all ended, so nothing
 * can appear behind the checkpoint any more. It reads them in `(transaction_id, global_position)` order and
 * moves its checkpoint only after the log acknowledged them. A crash between the two publishes the batch again
 * (consumers deduplicate by `ce_id`); nothing is ever skipped.
 *
 * One relay per schema and name is active: the holder of an advisory lock. Others wait as standbys.
 */
export const startOutboxRelay = (options: OutboxRelayOptions): OutboxRelay => {
  const { db, log, encode } = options;
  if (!NAME.test(options.name)) throw new TypeError(`invalid relay name ${JSON.stringify(options.name)}`);
  const batchSize = positiveInteger(options.batchSize ?? 100, 'batchSize');
  const batchIntervalMs = integerAtLeast(
    0,
    options.batchIntervalMs ?? DEFAULT_BATCH_INTERVAL_MS,
    'batchIntervalMs',
  );
  const pollIntervalMs = positiveInteger(options.pollIntervalMs ?? 1_000, 'pollIntervalMs');
  const publishTimeoutMs = positiveInteger(options.publishTimeoutMs ?? 30_000, 'publishTimeoutMs');
  const standbyIntervalMs = positiveInteger(options.standbyIntervalMs ?? 2_000, 'standbyIntervalMs');
  const retry = options.retry ?? DEFAULT_RETRY_POLICY;
  const topicFor = options.topicFor ?? ((event: RecordedEvent) => topicOf(event.streamType));
  const logger = (options.logger ?? createLogger({ service: options.name })).child({
    component: 'outbox-relay',
    schema: options.schema,
  });
  const schema = quoteIdent(options.schema);
  const source = `/services/${options.name}`;
  const lockKey = `outbox-relay:${options.schema}:${options.name}`;
  const stopping = new AbortController();

  const loadCheckpoint = async (): Promise<Checkpoint> => {
    await db.query(
      `insert into ${schema}.outbox_checkpoints (relay, transaction_id, global_position)
       values ($1, '0', 0) on conflict (relay) do nothing`,
      [options.name],
    );
    const { rows } = await db.query<{ transaction_id: string; global_position: string }>(
      `select transaction_id, global_position from ${schema}.outbox_checkpoints where relay = $1`,
      [options.name],
    );
    const row = rows[0];
    if (!row) throw new Error(`the checkpoint of relay ${options.name} vanished`);
    return { transactionId: row.transaction_id, globalPosition: row.global_position };
  };

  const readBatch = async (after: Checkpoint): Promise<(RecordedEvent & { transactionId: string })[]> => {
    const { rows } = await db.query<EventRow & { transaction_id: string }>(
      `select ${EVENT_COLUMNS}, transaction_id from ${schema}.events
       where (transaction_id, global_position) > ($1::xid8, $2::bigint)
         and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       order by transaction_id, global_position
       limit $3`,
      [after.transactionId, after.globalPosition, batchSize],
    );
    return rows.map((row) => ({ ...toRecordedEvent(row), transactionId: row.transaction_id }));
  };

  const publish = async (events: readonly RecordedEvent[]): Promise<void> => {
    // A stream has one type, so one topic: grouping by topic keeps every stream's events in order.
    const byTopic = new Map<string, LogMessage[]>();
    for (const event of events) {
      const topic = topicFor(event);
      const messages = byTopic.get(topic) ?? [];
      messages.push(toLogMessage(event, encode, source));
      byTopic.set(topic, messages);
    }
    for (const [topic, messages] of byTopic) {
      await withTimeout(log.publish(topic, messages), publishTimeoutMs, `publishing to ${topic}`);
    }
  };

  const saveCheckpoint = async (checkpoint: Checkpoint): Promise<void> => {
    // Forward only: a relay that lost its lock while publishing must not move a newer leader's checkpoint back.
    await db.query(
      `update ${schema}.outbox_checkpoints
       set transaction_id = $2, global_position = $3, updated_at = now()
       where relay = $1 and (transaction_id, global_position) < ($2::xid8, $3::bigint)`,
      [options.name, checkpoint.transactionId, checkpoint.globalPosition],
    );
  };

  /** Reads, publishes and checkpoints one batch; resolves to the new checkpoint and how many events it moved. */
  const relayBatch = async (after: Checkpoint): Promise<{ checkpoint: Checkpoint; relayed: number }> => {
    const batch = await readBatch(after);
    const last = batch.at(-1);
    if (!last) return { checkpoint: after, relayed: 0 };
    await publish(batch);
    const checkpoint = { transactionId: last.transactionId, globalPosition: last.globalPosition };
    await saveCheckpoint(checkpoint);
    return { checkpoint, relayed: batch.length };
  };

  /**
   * Relays batches while this instance holds the leader lock; returns once the lock is lost, or once stopping and
   * caught up with what was committed (a failing round is not tried again then).
   */
  const lead = async (lockLost: AbortSignal): Promise<void> => {
    const quit = AbortSignal.any([stopping.signal, lockLost]);
    logger.info('active: relaying events');
    const wakeUp = new WakeUp();
    // Appends in this process ring at once; another process's are found by the poll.
    const unlisten = onEventsAppended(options.schema, () => wakeUp.notify());
    try {
      let checkpoint = await loadCheckpoint();
      let failures = 0;
      // Set by the first round after stop(): the service stops its server first, so that round publishes its
      // last appends now rather than at the next start. A failing relay does not try again.
      let finalRound = false;
      while (!lockLost.aborted) {
        if (stopping.signal.aborted) {
          if (finalRound || failures > 0) break;
          finalRound = true;
        }
        // An append while the batch is read is seen by the wait below, which then returns at once.
        const seen = wakeUp.generation;
        const startedAt = performance.now();
        try {
          const round = await relayBatch(checkpoint);
          checkpoint = round.checkpoint;
          failures = 0;
          // A full batch suggests more are waiting: read again at once.
          if (round.relayed === batchSize) {
            finalRound = false;
            continue;
          }
          // A busy relay gathers what is appended for the rest of the interval into its next round.
          const rest = batchIntervalMs - (performance.now() - startedAt);
          if (round.relayed > 0 && rest > 0) await pause(rest, quit);
          await wakeUp.wait(seen, pollIntervalMs, quit);
        } catch (error) {
          failures++;
          const delayMs = retryDelayMs(retry, failures);
          logger.warn({ err: error, failures, delayMs }, 'relaying events failed; retrying the same batch');
          await pause(delayMs, quit);
        }
      }
    } finally {
      unlisten();
      logger.info(stopping.signal.aborted ? 'stopped' : 'lost the leader lock: standing by');
    }
  };

  const run = async (): Promise<void> => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      try {
        const led = await db.withAdvisoryLock(lockKey, async (lockLost) => {
          await lead(lockLost);
          return true;
        });
        failures = 0;
        if (led === undefined) await pause(standbyIntervalMs, stopping.signal);
      } catch (error) {
        failures++;
        const delayMs = retryDelayMs(retry, failures);
        logger.error({ err: error, failures, delayMs }, 'outbox relay failed; restarting');
        await pause(delayMs, stopping.signal);
      }
    }
  };

  const running = run();

  return {
    async lag() {
      const { rows } = await db.query<{ lag: string }>(
        `select count(*) as lag from ${schema}.events
         where (transaction_id, global_position) > coalesce(
           (select (transaction_id, global_position) from ${schema}.outbox_checkpoints where relay = $1),
           ('0'::xid8, 0::bigint))`,
        [options.name],
      );
      return Number(rows[0]?.lag ?? 0);
    },
    async stop() {
      stopping.abort();
      await running;
    },
  };
};
