import type { Logger } from '@marketplace/platform';
import type { DeliveredBatch, DeliveredMessage, LogConsumer } from './eventlog.port.js';
import { deliverUntilHandled, retryDelayMs, type RetryPolicy } from './delivery.js';
import { pause } from './timing.js';
import { WakeUp } from './wake-up.js';

/** One reader of one partition, from after the offset it was opened at, in offset order. */
export interface PartitionReader {
  /** The next messages, at most `limit`; none when none are there yet (the reader then rings its wake-up). */
  read(limit: number): Promise<DeliveredMessage[]>;
  close(): Promise<void>;
}

/** Where a topic's messages are stored: the embedded log's table, or a broker. */
export interface PartitionSource {
  /** The offset each partition of a new group starts after (0: before the first message). */
  startOffsets(topic: string, group: string, from: 'beginning' | 'latest'): Promise<readonly string[]>;
  /** The offset of each partition's last message (0: none yet): a follower starts after it. */
  endOffsets(topic: string): Promise<readonly string[]>;
  /** Opens a reader of `partition` after `after`; it rings `wake` when messages arrive, if it can tell. */
  openReader(
    topic: string,
    partition: number,
    after: string,
    wake: WakeUp,
    signal: AbortSignal,
  ): PartitionReader;
}

/** What reading partitions and handing their batches over needs, for a group member or a follower. */
export interface PartitionReadSettings {
  readonly source: PartitionSource;
  /** How long an idle partition waits for a wake-up before it reads again anyway. */
  readonly pollIntervalMs: number;
  /** Messages read at once, and so the most per batch (a consumer's `maxBatch` may ask for fewer). */
  readonly batchSize: number;
  /** The least time between the starts of two short batches of one partition (`DEFAULT_BATCH_INTERVAL_MS`). */
  readonly batchIntervalMs: number;
  readonly retry: RetryPolicy;
  readonly logger: Logger;
}

/** A running reader of one partition, as its consumer tracks it. */
export interface PartitionWorker {
  readonly controller: AbortController;
  readonly wake: WakeUp;
  /** The last offset handled and not yet committed (a group member commits it; a follower has nothing to). */
  handled: string | undefined;
}

export const newPartitionWorker = (): PartitionWorker => ({
  controller: new AbortController(),
  wake: new WakeUp(),
  handled: undefined,
});

/**
 * When a consumer's next round of short batches starts: the latest start of a short batch plus
 * `batchIntervalMs`. A partition's next short batch joins it when it is due at most half an interval after its
 * own time (see `until`), so the consumer's partitions' batches come at the same moment and a projection can
 * apply them in one transaction.
 */
export class BatchRounds {
  private next = 0;

  constructor(private readonly intervalMs: number) {}

  /** A short batch started at `startedAt`. */
  started(startedAt: number): void {
    this.next = Math.max(this.next, startedAt + this.intervalMs);
  }

  /**
   * Waits until `intervalMs` after `startedAt`, the start of a partition's short batch, and on to the next round
   * when that starts at most half an interval later.
   */
  async until(startedAt: number, stop: AbortSignal): Promise<void> {
    const own = startedAt + this.intervalMs;
    let until = own;
    for (;;) {
      const rest = until - performance.now();
      if (rest > 0 && !(await pause(rest, stop))) return;
      if (this.next <= until || this.next > own + this.intervalMs / 2) return;
      until = this.next;
    }
  }
}

/**
 * Reads `partition` after `after` until the worker is aborted, a batch per read, handing each batch to the
 * handler (retried in place until it resolves) and recording its last offset in `worker.handled`.
 */
export const readPartition = async (
  settings: PartitionReadSettings,
  rounds: BatchRounds,
  consumer: {
    readonly topic: string;
    readonly partition: number;
    readonly after: string;
    /** Messages per read, and so the most per batch. */
    readonly readSize: number;
    readonly handler: (batch: DeliveredBatch) => Promise<void>;
  },
  worker: PartitionWorker,
): Promise<void> => {
  const { pollIntervalMs, retry, logger, source } = settings;
  const { topic, partition, readSize, handler } = consumer;
  const stop = worker.controller.signal;
  const reader = source.openReader(topic, partition, consumer.after, worker.wake, stop);
  try {
    for (let failures = 0; !stop.aborted;) {
      const seen = worker.wake.generation;
      let messages: DeliveredMessage[];
      try {
        messages = await reader.read(readSize);
        failures = 0;
      } catch (error) {
        logger.warn({ err: error, topic, partition }, 'reading the log failed; retrying');
        await pause(retryDelayMs(retry, ++failures), stop);
        continue;
      }
      const last = messages.at(-1);
      const startedAt = performance.now();
      const short = messages.length < readSize;
      if (last !== undefined && short) rounds.started(startedAt);
      if (last !== undefined) {
        if (stop.aborted) return;
        const batch = { topic, partition, messages };
        if ((await deliverUntilHandled(batch, handler, { retry, signal: stop, logger })) === 'abandoned') {
          return;
        }
        worker.handled = last.offset;
      }
      // A short batch was the whole partition as of the read; a message that came since has woken the worker
      // (the generation moved, so this returns at once). Reading again right away would find nothing: at one
      // message per wake-up that empty read was half of the log's reads.
      if (short) {
        // A busy partition gathers what arrives for the rest of the interval into the next batch: one
        // transaction for several messages instead of one each (DEFAULT_BATCH_INTERVAL_MS).
        if (last !== undefined) await rounds.until(startedAt, stop);
        await worker.wake.wait(seen, pollIntervalMs, stop);
      }
    }
  } finally {
    await reader.close();
  }
};

/**
 * Starts `reader` (a group member joining, a follower), tracked in `running` while it reads so the log's close
 * can stop it; closing the consumer returned stops tracking it and closes it.
 */
export const startTracked = async <Reader extends { close(): Promise<void> }>(
  running: Set<Reader>,
  reader: Reader,
  start: () => Promise<void>,
): Promise<LogConsumer> => {
  running.add(reader);
  try {
    await start();
  } catch (error) {
    running.delete(reader);
    throw error;
  }
  return {
    close: async () => {
      running.delete(reader);
      await reader.close();
    },
  };
};
