/**
 * The EventLog port: a partitioned, durable, replayable log of keyed messages with consumer groups.
 * Adapters: embedded (stored through the Database port, in-process wake-ups), NATS JetStream, Kafka.
 * All pass one contract suite (`@marketplace/eventlog/testing`): ordering per key, at-least-once delivery,
 * consumer groups share work, a new group can replay from the beginning, redelivery after a crash before ack,
 * delivery in batches of one partition with one acknowledgement per batch, and followers that see every message
 * from the moment they start and leave nothing behind.
 *
 * Names: a topic is dot-separated tokens of letters, digits, `_` and `-` (e.g. `marketplace.listing.v1`); a group
 * is one such token. Every adapter checks them, and the messages, the same way (see `validation.ts`).
 */
export interface LogMessage {
  /**
   * Partition key: the aggregate id. Messages with one key are delivered in publish order. Non-empty text
   * without line breaks or surrounding white space (a broker may carry it in a header).
   */
  readonly key: string;
  readonly value: Uint8Array;
  /**
   * CloudEvents (`ce_id`, `ce_type`, `ce_source`, `ce_time`, `ce_subject`) and W3C `traceparent`. Names are
   * letters, digits, `_`, `-` and `.`; values are text without line breaks or surrounding white space, so
   * that they round-trip through every broker's header encoding unchanged.
   */
  readonly headers: Readonly<Record<string, string>>;
}

export interface DeliveredMessage extends LogMessage {
  readonly topic: string;
  readonly partition: number;
  /** The message's position in its partition, as a decimal string (Kafka offset, stream sequence, row id). */
  readonly offset: string;
}

/** Consecutive messages of one partition, in offset order (never empty), handed to a handler at once. */
export interface DeliveredBatch {
  readonly topic: string;
  readonly partition: number;
  readonly messages: readonly DeliveredMessage[];
}

/** Messages per batch unless a consumer asks for fewer (`maxBatch`). */
export const DEFAULT_MAX_BATCH = 256;
/**
 * The least time between the starts of two short batches of one (group, partition): a partition that receives
 * messages faster than this hands them over in batches of several, each one transaction and one commit instead
 * of one per message, at most this much later. A quiet partition's first message goes at once, and a full batch
 * never waits (docs/architecture.md, "The batched consumer pipeline"). The embedded log and NATS keep a
 * member's busy partitions on one round, so their batches come together.
 */
export const DEFAULT_BATCH_INTERVAL_MS = 100;

export interface ConsumeOptions {
  readonly topic: string;
  /** Members of one group share the partitions; every group sees every message. */
  readonly group: string;
  /**
   * Where a group with no committed position starts: the first message (default) or only messages published
   * after it started consuming. A group with a committed position always resumes after it.
   */
  readonly from?: 'beginning' | 'latest';
  /** The most messages one batch holds: 1 to 10,000, default `DEFAULT_MAX_BATCH`. */
  readonly maxBatch?: number;
  /**
   * Called once per batch, one batch at a time per partition, in offset order. A partition has one owner in
   * its group at a time. The batch is acknowledged (its last offset committed) only after the returned promise
   * resolves; a rejection or a crash means its messages are delivered again. An adapter may acknowledge several
   * batches at once (the embedded log and NATS: with the member's lease renewal, and when the partition is handed
   * back), so a crash delivers again what was handled since the last acknowledgement. After a rejection the same
   * member retries the same batch with a growing delay, holding back the messages behind it, so a batch that
   * always fails stops its partition (ordering wins over progress; the failures are logged). A handler that
   * needs no batch wraps a per-message function in `eachMessage`.
   */
  readonly handler: (batch: DeliveredBatch) => Promise<void>;
}

/**
 * A follower of a topic: this process alone, from now on, with no consumer group and no stored position (see
 * `EventLog.follow`).
 */
export interface FollowOptions {
  readonly topic: string;
  /** The most messages one batch holds: 1 to 10,000, default `DEFAULT_MAX_BATCH`. */
  readonly maxBatch?: number;
  /** As in `ConsumeOptions`: one batch at a time per partition, in offset order, a rejected one retried in place. */
  readonly handler: (batch: DeliveredBatch) => Promise<void>;
}

/** A batch handler that hands the messages to `handle` one after another (a failure fails the batch). */
export const eachMessage =
  (handle: (message: DeliveredMessage) => Promise<void>): ConsumeOptions['handler'] =>
  async (batch) => {
    for (const message of batch.messages) await handle(message);
  };

/** A running consumer of a topic in a group, or follower (not to be confused with a saved search). */
export interface LogConsumer {
  /**
   * Stops fetching, waits for the batch in hand to finish, commits, and leaves the group; a follower deletes
   * whatever the log kept for it.
   */
  close(): Promise<void>;
}

export interface EventLog {
  /**
   * Appends messages to a topic. Resolves only after the log durably acknowledged all of them; messages with
   * one key keep their order. Rejects (and may have published a prefix) on failure: callers retry, consumers
   * deduplicate.
   */
  publish(topic: string, messages: readonly LogMessage[]): Promise<void>;
  /** Joins the group on the topic and hands it batches until the consumer is closed. */
  consume(options: ConsumeOptions): Promise<LogConsumer>;
  /**
   * Hands this process every message published to the topic after the returned promise resolved, from every
   * partition, until the follower is closed: for state that each process holds for itself (the gateway's MCP
   * sessions), where a consumer group per process would leave a group behind at every restart. Every follower
   * sees every message; what is published while none runs never reaches it. Its position is in memory only:
   * the log stores no row, offset or durable consumer for it, so closing it, or the process dying, leaves
   * nothing behind (on NATS an ephemeral consumer that JetStream drops 5 minutes after a crash; on Kafka, which
   * has no consumer without a group, a group of its own that closing deletes and a crash leaves to the
   * broker's offset retention).
   */
  follow(options: FollowOptions): Promise<LogConsumer>;
  /**
   * Forgets a consumer group of a topic that no longer consumes it (a projection rebuilt under a new group):
   * its committed positions and whatever else the log keeps for it (the embedded log's and NATS's rows, NATS's
   * durable consumers of the group, the Kafka consumer group). A group that consumes the topic again afterwards
   * starts as a new one. Idempotent: a group already forgotten, or never seen, is no error. Rejects while a
   * consumer of this client is in the group; members in other processes are the caller's to stop first.
   */
  deleteGroup(topic: string, group: string): Promise<void>;
  /** Closes every consumer and connection. */
  close(): Promise<void>;
}

/** Stable partition of a key (FNV-1a), shared by the adapters that partition on the client side. */
export const partitionOf = (key: string, partitions: number): number => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % partitions;
};

/** Topic names of the event stream: one per aggregate type. */
export const topicOf = (aggregateType: string): string => `marketplace.${aggregateType}.v1`;
