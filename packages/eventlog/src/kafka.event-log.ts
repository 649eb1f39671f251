import { randomUUID } from 'node:crypto';
import {
  Kafka,
  Partitioners,
  logLevel,
  type Admin,
  type Consumer,
  type EachBatchPayload,
  type IHeaders,
  type KafkaMessage,
  type LogEntry,
  type Producer,
} from 'kafkajs';
import { createLogger, type Logger } from '@marketplace/platform';
import type {
  DeliveredMessage,
  EventLog,
  LogMessage,
  ConsumeOptions,
  FollowOptions,
  LogConsumer,
} from './eventlog.port.js';
import { DEFAULT_RETRY_POLICY, deliverUntilHandled, type RetryPolicy } from './delivery.js';
import { withTimeout } from './timing.js';
import {
  assertDuration,
  assertGroup,
  assertMessages,
  assertPartitions,
  assertTopic,
  maxBatchOf,
} from './validation.js';

/** The part of a kafkajs `Kafka` client this adapter uses; tests pass a double of it. */
export type KafkaClient = Pick<Kafka, 'producer' | 'consumer' | 'admin'>;

export interface KafkaEventLogOptions {
  /** `host:port` of the bootstrap brokers. Required unless `kafka` is given. */
  readonly brokers?: readonly string[];
  readonly clientId?: string;
  /** A kafkajs client to use instead of `brokers` (TLS/SASL set up by the caller, or a test double). */
  readonly kafka?: KafkaClient;
  /** Partitions of the topics this client creates; an existing topic keeps its own count. */
  readonly partitions?: number;
  /** Replication factor of created topics; -1 takes the broker's default. */
  readonly replicationFactor?: number;
  /**
   * Bound on one publish. The idempotent producer retries without limit (a limit would void its ordering
   * guarantee), so this is what turns a broker outage into an error the outbox relay retries.
   */
  readonly publishTimeoutMs?: number;
  /** Bound on admin requests (topic creation, group offsets). */
  readonly requestTimeoutMs?: number;
  /** A member that sends no heartbeat for this long is dropped and its partitions go to the others. */
  readonly sessionTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
  readonly retry?: RetryPolicy;
  readonly logger?: Logger;
}

const toBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Kafka headers may repeat a name or carry bytes; the port's headers are text, the last value winning. */
export const decodeHeaders = (headers: IHeaders | undefined): Record<string, string> => {
  const decoded: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers ?? {})) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value !== undefined) decoded[name] = value.toString();
  }
  return decoded;
};

const toDelivered = (topic: string, partition: number, message: KafkaMessage): DeliveredMessage => ({
  topic,
  partition,
  offset: message.offset,
  key: message.key?.toString() ?? '',
  // A copy: a view would pin kafkajs's whole fetch buffer for as long as the handler keeps the value.
  value: new Uint8Array(message.value ?? []),
  headers: decodeHeaders(message.headers),
});

const toKafkaMessage = (message: LogMessage) => ({
  key: message.key,
  value: toBuffer(message.value),
  headers: { ...message.headers },
});

/** Routes kafkajs's own log lines into our structured logger. */
const kafkaLogCreator =
  (logger: Logger) =>
  () =>
  ({ namespace, level, log: { message, ...extra } }: LogEntry): void => {
    const fields = { kafkajs: namespace, ...extra };
    if (level === logLevel.ERROR) logger.error(fields, message);
    else if (level === logLevel.WARN) logger.warn(fields, message);
    else logger.debug(fields, message);
  };

/**
 * The EventLog on Kafka, through kafkajs. Partitioning is Kafka's own (murmur2 of the key, like the Java
 * client), a consumer group is a Kafka consumer group, and each consumer is one member. What one fetch
 * returns for a partition is handed over in batches of up to `maxBatch`; each batch's offset is committed
 * explicitly, once, after its handler resolved. A member that dies before that leaves the offset uncommitted,
 * so the partition's next owner gets the batch again. Kafka has no consumer without a group (kafkajs cannot
 * assign partitions by hand), so a follower is a group of its own, `follow-<random>`, started at the end of the
 * topic, that commits nothing after that and is deleted when the follower closes; one left by a process that
 * died goes with the broker's offset retention (`offsets.retention.minutes`, 7 days by default).
 */
export const createKafkaEventLog = async (options: KafkaEventLogOptions): Promise<EventLog> => {
  const partitions = options.partitions ?? 8;
  assertPartitions(partitions);
  const publishTimeoutMs = options.publishTimeoutMs ?? 30_000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 30_000;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 3_000;
  assertDuration('publishTimeoutMs', publishTimeoutMs);
  assertDuration('requestTimeoutMs', requestTimeoutMs);
  assertDuration('sessionTimeoutMs', sessionTimeoutMs);
  assertDuration('heartbeatIntervalMs', heartbeatIntervalMs);
  const retry = options.retry ?? DEFAULT_RETRY_POLICY;
  const logger = options.logger ?? createLogger({ service: 'eventlog-kafka' });

  const kafka = options.kafka ?? connectKafka(options, logger, requestTimeoutMs);
  const producer: Producer = kafka.producer({
    // Exactly one copy per send, in order, even when the producer retries (see the kafkajs docs on Producing).
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const admin: Admin = kafka.admin();
  await producer.connect();
  await admin.connect();

  const topics = new Map<string, Promise<void>>();
  const consumers = new Set<LogConsumer>();
  let closed = false;

  const ensureTopic = (topic: string): Promise<void> => {
    let ready = topics.get(topic);
    if (!ready) {
      ready = withTimeout(
        admin.createTopics({
          topics: [{ topic, numPartitions: partitions, replicationFactor: options.replicationFactor ?? -1 }],
          waitForLeaders: true,
          timeout: requestTimeoutMs,
        }),
        requestTimeoutMs,
        `creating topic ${topic}`,
      ).then(() => undefined);
      topics.set(topic, ready);
      ready.catch(() => topics.delete(topic));
    }
    return ready;
  };

  /**
   * kafkajs resolves "latest" only when the member first fetches, which can be after messages published
   * since consume() resolved. A new group starting at 'latest' therefore gets its offsets set to the end of
   * the topic before it joins, so "published after consume() resolved" means exactly that.
   */
  const startNewGroupAtEnd = async (topic: string, group: string): Promise<void> => {
    const [committed] = await withTimeout(
      admin.fetchOffsets({ groupId: group, topics: [topic] }),
      requestTimeoutMs,
      `fetching offsets of group ${group}`,
    );
    const isNewGroup = (committed?.partitions ?? []).every((partition) => partition.offset === '-1');
    if (!isNewGroup) return;
    const ends = await withTimeout(
      admin.fetchTopicOffsets(topic),
      requestTimeoutMs,
      `fetching the end of ${topic}`,
    );
    await withTimeout(
      admin.setOffsets({
        groupId: group,
        topic,
        partitions: ends.map(({ partition, high }) => ({ partition, offset: high })),
      }),
      requestTimeoutMs,
      `starting group ${group} at the end of ${topic}`,
    ).catch((error: unknown) => {
      // Kafka refuses while the group has members: then another member started it already.
      logger.debug({ err: error, topic, group }, 'group offsets not set; the group is already running');
    });
  };

  /**
   * Starts a member of `group`; without `commits`, what it handled is only remembered in memory (a follower).
   * Resolves to its stop: that waits for the batch in hand (kafkajs finishes the running eachBatch), then leaves
   * the group.
   */
  const startConsumer = async (
    { topic, group, from = 'beginning', handler, maxBatch: requestedMaxBatch }: ConsumeOptions,
    { commits }: { readonly commits: boolean },
  ): Promise<() => Promise<void>> => {
    const maxBatch = maxBatchOf(requestedMaxBatch);
    if (closed) throw new Error('the event log is closed');
    await ensureTopic(topic);
    if (from === 'latest') await startNewGroupAtEnd(topic, group);
    // Closed while this waited: a consumer connected now would outlive the log (as on the embedded log and NATS).
    if (closed) throw new Error('the event log is closed');

    const consumer: Consumer = kafka.consumer({
      groupId: group,
      sessionTimeout: sessionTimeoutMs,
      heartbeatInterval: heartbeatIntervalMs,
      allowAutoTopicCreation: false,
    });
    const stopping = new AbortController();
    const eachBatch = async (payload: EachBatchPayload): Promise<void> => {
      const { topic, partition, messages } = payload.batch;
      for (let start = 0; start < messages.length; start += maxBatch) {
        // Not committing leaves the rest to whoever owns the partition next (after a rebalance: stale).
        if (stopping.signal.aborted || !payload.isRunning() || payload.isStale()) return;
        const chunk = messages.slice(start, start + maxBatch);
        const batch = {
          topic,
          partition,
          messages: chunk.map((message) => toDelivered(topic, partition, message)),
        };
        const outcome = await deliverUntilHandled(batch, handler, {
          retry,
          signal: stopping.signal,
          logger,
          keepAlive: { intervalMs: heartbeatIntervalMs, beat: () => payload.heartbeat() },
        });
        if (outcome === 'abandoned') return;
        const last = chunk[chunk.length - 1]!.offset;
        payload.resolveOffset(last);
        // Kafka's committed offset is the next one to read. A failed commit throws, so kafkajs rejoins and the
        // batch is delivered again rather than skipped.
        if (commits)
          await consumer.commitOffsets([{ topic, partition, offset: (BigInt(last) + 1n).toString() }]);
      }
    };

    consumer.on(consumer.events.CRASH, ({ payload }) =>
      logger.error(
        { err: payload.error, topic, group, restarting: payload.restart },
        'Kafka consumer crashed',
      ),
    );
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: from === 'beginning' });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: partitions,
        eachBatch,
      });
    } catch (error) {
      await consumer.disconnect();
      throw error;
    }
    return async () => {
      stopping.abort();
      await consumer.disconnect();
    };
  };

  /** Tracks a running consumer, so that closing the log closes it; `close` runs once. */
  const tracked = (close: () => Promise<void>): LogConsumer => {
    let closing: Promise<void> | undefined;
    const logConsumer: LogConsumer = {
      close: () =>
        (closing ??= close().finally(() => {
          consumers.delete(logConsumer);
        })),
    };
    consumers.add(logConsumer);
    return logConsumer;
  };

  /** The groups this client's consumers are in, per topic: `deleteGroup` refuses them. */
  const consuming = new Map<string, number>();
  const consumingKey = (topic: string, group: string): string => `${topic} ${group}`;

  const consume = async (options: ConsumeOptions): Promise<LogConsumer> => {
    assertTopic(options.topic);
    assertGroup(options.group);
    const key = consumingKey(options.topic, options.group);
    const stop = await startConsumer(options, { commits: true });
    consuming.set(key, (consuming.get(key) ?? 0) + 1);
    return tracked(async () => {
      const left = (consuming.get(key) ?? 1) - 1;
      if (left === 0) consuming.delete(key);
      else consuming.set(key, left);
      await stop();
    });
  };

  /**
   * Deletes the Kafka consumer group, and with it its committed offsets. A Kafka group's offsets are not per
   * topic, so this forgets the group on every topic: ours consume one topic each (a group per purpose). A group
   * Kafka does not know (already deleted, never committed) is no error.
   */
  const deleteGroup = async (topic: string, group: string): Promise<void> => {
    assertTopic(topic);
    assertGroup(group);
    if (closed) throw new Error('the event log is closed');
    if (consuming.has(consumingKey(topic, group)))
      throw new Error(
        `the group ${group} still consumes ${topic} here: close its consumer before deleting it`,
      );
    await withTimeout(admin.deleteGroups([group]), requestTimeoutMs, `deleting group ${group}`).catch(
      (error: unknown) => {
        const groups = (error as { groups?: readonly { errorCode?: number }[] }).groups ?? [];
        if (groups.length === 0 || groups.some(({ errorCode }) => errorCode !== GROUP_ID_NOT_FOUND))
          throw error;
      },
    );
  };

  const follow = async ({ topic, maxBatch, handler }: FollowOptions): Promise<LogConsumer> => {
    assertTopic(topic);
    maxBatchOf(maxBatch);
    if (closed) throw new Error('the event log is closed');
    const group = `follow-${randomUUID()}`;
    const deleteGroup = () =>
      withTimeout(admin.deleteGroups([group]), requestTimeoutMs, `deleting group ${group}`).then(
        () => undefined,
        (error: unknown) => logger.warn({ err: error, topic, group }, 'follower group not deleted'),
      );
    let stop: () => Promise<void>;
    try {
      stop = await startConsumer({ topic, group, from: 'latest', maxBatch, handler }, { commits: false });
    } catch (error) {
      await deleteGroup();
      throw error;
    }
    return tracked(async () => {
      await stop();
      await deleteGroup();
    });
  };

  const publish = async (topic: string, messages: readonly LogMessage[]): Promise<void> => {
    assertMessages(topic, messages);
    if (closed) throw new Error('the event log is closed');
    if (messages.length === 0) return;
    await ensureTopic(topic);
    await withTimeout(
      producer.send({ topic, acks: -1, timeout: publishTimeoutMs, messages: messages.map(toKafkaMessage) }),
      publishTimeoutMs,
      `publishing ${messages.length} messages to ${topic}`,
      (error) => logger.warn({ err: error, topic }, 'a timed-out publish failed later'),
    );
  };

  return {
    publish,
    consume,
    follow,
    deleteGroup,
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.all([...consumers].map((logConsumer) => logConsumer.close()));
      await Promise.all([producer.disconnect(), admin.disconnect()]);
    },
  };
};

/** Kafka's error code for a group it does not know (DeleteGroups on a group deleted before, or never made). */
const GROUP_ID_NOT_FOUND = 69;

const connectKafka = (options: KafkaEventLogOptions, logger: Logger, requestTimeoutMs: number): Kafka => {
  if (!options.brokers?.length) throw new TypeError('createKafkaEventLog needs `brokers` or `kafka`');
  return new Kafka({
    brokers: [...options.brokers],
    clientId: options.clientId ?? 'marketplace',
    requestTimeout: requestTimeoutMs,
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(logger),
  });
};
