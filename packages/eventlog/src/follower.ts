import type { FollowOptions } from './eventlog.port.js';
import { maxBatchOf } from './validation.js';
import {
  BatchRounds,
  newPartitionWorker,
  readPartition,
  type PartitionReadSettings,
  type PartitionWorker,
} from './partition-worker.js';

/**
 * A follower of a topic on the embedded log or NATS (`EventLog.follow`): a reader of every partition from its
 * end as of `start()`, whose positions are only in this object, so nothing is written anywhere and nothing is
 * left to clean up, whether it closes or the process dies.
 */
export class Follower {
  readonly topic: string;
  private readonly workers: (PartitionWorker & { done: Promise<void> })[] = [];
  private readonly rounds: BatchRounds;
  private readonly readSize: number;
  private closed = false;

  constructor(
    private readonly settings: PartitionReadSettings,
    private readonly options: FollowOptions,
  ) {
    this.topic = options.topic;
    this.readSize = Math.min(settings.batchSize, maxBatchOf(options.maxBatch));
    this.rounds = new BatchRounds(settings.batchIntervalMs);
  }

  /** Reads every partition after its last message as of now. Register the follower for wake-ups before. */
  async start(): Promise<void> {
    const ends = await this.settings.source.endOffsets(this.topic);
    if (this.closed) return;
    ends.forEach((after, partition) => {
      const worker = { ...newPartitionWorker(), done: Promise.resolve() };
      const { readSize, topic } = this;
      const consumer = { topic, partition, after, readSize, handler: this.options.handler };
      worker.done = readPartition(this.settings, this.rounds, consumer, worker).catch((error: unknown) =>
        this.settings.logger.error({ err: error, topic, partition }, 'follower failed'),
      );
      this.workers.push(worker);
    });
  }

  /** New messages were published to these partitions of the topic. */
  messagesArrived(partitions: readonly number[]): void {
    for (const partition of partitions) this.workers[partition]?.wake.notify();
  }

  /** Stops reading; the batches in hand finish first. */
  async close(): Promise<void> {
    this.closed = true;
    for (const worker of this.workers) worker.controller.abort();
    await Promise.all(this.workers.map((worker) => worker.done));
  }
}
