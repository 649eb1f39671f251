import { connect, headers as natsHeaders, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstreamManager,
  type Consumer,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { createLogger, type Logger } from '@marketplace/platform';
import {
  type DeliveredMessage,
  type EventLog,
  type LogMessage,
  type SubscribeOptions,
  type Subscription,
} from './eventlog.port.js';
import { DEFAULT_RETRY_POLICY, deliverUntilHandled, retryDelayMs, type RetryPolicy } from './delivery.js';
import { groupByPartition } from './partitioning.js';
import { pause, withTimeout } from './timing.js';
import {
  assertDuration,
  assertGroup,
  assertMessages,
  assertPartitions,
  assertTopic,
  maxBatchOf,
} from './validation.js';

export interface NatsEventLogOptions {
  /** Server URLs, as a list or a comma-separated string. Required unless `connection` is given. */
  readonly servers?: string | readonly string[];
  /** An open connection to use instead of `servers`; its owner closes it (`close()` leaves it open). */
  readonly connection?: NatsConnection;
  /** Partitions per topic (subjects `<topic>.0` … `<topic>.<n-1>`); every client of a topic must agree. */
  readonly partitions?: number;
  /** How long a delivered message may stay unacknowledged before JetStream redelivers it (crash detection). */
  readonly ackWaitMs?: number;
  readonly connectTimeoutMs?: number;
  /** Bound on every JetStream API call and publish acknowledgement. */
  readonly requestTimeoutMs?: number;
  /** Lifetime of one pull request; the client renews it. At least 1000 (a JetStream limit). */
  readonly pullExpiresMs?: number;
  /** Stream replicas (1 on a single server; 3 on a cluster). */
  readonly replicas?: number;
  /** How long JetStream remembers a `Nats-Msg-Id` to drop a re-published duplicate. */
  readonly duplicateWindowMs?: number;
  readonly retry?: RetryPolicy;
  readonly logger?: Logger;
}

/** The stream of a topic: `marketplace.listing.v1` → `MARKETPLACE_LISTING_V1`. */
export const streamNameOf = (topic: string): string => topic.replaceAll('.', '_').toUpperCase();
export const subjectOf = (topic: string, partition: number): string => `${topic}.${partition}`;
/** One durable pull consumer per (group, partition): `catalog-p3`. */
export const durableNameOf = (group: string, partition: number): string => `${group}-p${partition}`;
/** The partition count travels in the stream description, so a client configured differently fails loudly. */
export const streamDescriptionOf = (partitions: number): string => `eventlog partitions=${partitions}`;

/** Messages one pull request asks for; the consumer's `max_ack_pending: 1` still hands them out one by one. */
const PULL_BATCH = 100;

/** NATS has no message key: it travels in this header and is removed again on delivery. */
export const KEY_HEADER = 'Eventlog-Key';
const isReservedHeader = (name: string): boolean => {
  const lower = name.toLowerCase();
  return lower === KEY_HEADER.toLowerCase() || lower.startsWith('nats-');
};

const isApiError = (error: unknown, code: number): boolean =>
  error instanceof JetStreamApiError && error.code === code;

const serverList = (servers: string | readonly string[] | undefined): string[] => {
  const list = (typeof servers === 'string' ? servers.split(',') : [...(servers ?? [])])
    .map((server) => server.trim())
    .filter((server) => server !== '');
  if (list.length === 0) throw new TypeError('createNatsEventLog needs `servers` or `connection`');
  return list;
};

/**
 * The EventLog on NATS JetStream. One file-backed stream per topic with one subject per partition; a consumer
 * group is one durable pull consumer per partition with `max_ack_pending: 1`, so however many members pull from
 * it, JetStream hands out a partition's next message only after the previous one was acknowledged: members
 * share the work and ordering per key holds. A message not acknowledged within `ackWaitMs` (a crashed member)
 * goes to another member; a member still working on one says so with in-progress acks. Batches are therefore
 * one message long here: JetStream 2.9 has no way to give a partition one owner (pinned pull clients came in
 * 2.11), and without one, two members holding successive ranges of a partition would break the order per key.
 */
export const createNatsEventLog = async (options: NatsEventLogOptions): Promise<EventLog> => {
  const partitions = options.partitions ?? 8;
  assertPartitions(partitions);
  const ackWaitMs = options.ackWaitMs ?? 30_000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 5_000;
  const pullExpiresMs = options.pullExpiresMs ?? 10_000;
  const duplicateWindowMs = options.duplicateWindowMs ?? 120_000;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  assertDuration('connectTimeoutMs', connectTimeoutMs);
  assertDuration('ackWaitMs', ackWaitMs, 100);
  assertDuration('requestTimeoutMs', requestTimeoutMs);
  assertDuration('pullExpiresMs', pullExpiresMs, 1_000); // a JetStream minimum
  assertDuration('duplicateWindowMs', duplicateWindowMs);
  const retry = options.retry ?? DEFAULT_RETRY_POLICY;
  const logger = options.logger ?? createLogger({ service: 'eventlog-nats' });

  const nc =
    options.connection ??
    (await connect({
      servers: serverList(options.servers),
      timeout: connectTimeoutMs,
      // A service rides out a broker restart instead of giving up after the default ten attempts.
      maxReconnectAttempts: -1,
      // Otherwise every request (each acknowledgement, each publish) builds an Error up front for the stack of
      // a timeout it may never have: a few percent of each consumer's CPU per message in the profiles. Timeouts
      // and failures are still raised, with the client's own stack.
      noAsyncTraces: true,
    }));
  const ownsConnection = options.connection === undefined;
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc, { timeout: requestTimeoutMs });
  } catch (error) {
    if (ownsConnection) await nc.close();
    throw error;
  }
  const js = jsm.jetstream();
  const streams = new Map<string, Promise<string>>();
  const subscriptions = new Set<Subscription>();
  let closed = false;

  const checkStream = (info: StreamInfo, topic: string): string => {
    const expected = streamDescriptionOf(partitions);
    if (!info.config.subjects?.includes(`${topic}.*`)) {
      throw new Error(`stream ${info.config.name} exists but does not hold topic ${topic}`);
    }
    if (info.config.description !== expected) {
      throw new Error(
        `stream ${info.config.name} was created with "${info.config.description ?? ''}", ` +
          `but this client uses ${partitions} partitions`,
      );
    }
    return info.config.name;
  };

  const createOrCheckStream = async (topic: string): Promise<string> => {
    const name = streamNameOf(topic);
    const config: Partial<StreamConfig> & { name: string } = {
      name,
      subjects: [`${topic}.*`],
      description: streamDescriptionOf(partitions),
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      num_replicas: options.replicas ?? 1,
      duplicate_window: nanos(duplicateWindowMs),
    };
    try {
      return checkStream(await jsm.streams.info(name), topic);
    } catch (error) {
      if (!isApiError(error, JetStreamApiCodes.StreamNotFound)) throw error;
    }
    try {
      return checkStream(await jsm.streams.add(config), topic);
    } catch (error) {
      // Another client created it first: accept it if it matches.
      logger.debug({ err: error, stream: name }, 'stream creation raced; checking the existing stream');
      return checkStream(await jsm.streams.info(name), topic);
    }
  };

  const ensureStream = (topic: string): Promise<string> => {
    let ready = streams.get(topic);
    if (!ready) {
      ready = createOrCheckStream(topic);
      streams.set(topic, ready);
      ready.catch(() => streams.delete(topic));
    }
    return ready;
  };

  const ensureConsumer = async (
    stream: string,
    topic: string,
    group: string,
    partition: number,
    from: 'beginning' | 'latest',
  ): Promise<Consumer> => {
    const name = durableNameOf(group, partition);
    const config: Partial<ConsumerConfig> = {
      durable_name: name,
      filter_subject: subjectOf(topic, partition),
      // Only a new group starts by `from`; an existing durable consumer resumes where its group left off.
      deliver_policy: from === 'latest' ? DeliverPolicy.New : DeliverPolicy.All,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs),
      max_ack_pending: 1,
      max_deliver: -1,
    };
    try {
      await jsm.consumers.info(stream, name);
    } catch (error) {
      if (!isApiError(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
      await jsm.consumers.add(stream, config).catch(async (addError: unknown) => {
        // Another member created it first (possibly with another `from`): use theirs.
        logger.debug(
          { err: addError, stream, consumer: name },
          'consumer creation raced; using the existing one',
        );
        await jsm.consumers.info(stream, name).catch(() => {
          throw addError;
        });
      });
    }
    return js.consumers.get(stream, name);
  };

  const toDelivered = (topic: string, partition: number, message: JsMsg): DeliveredMessage => {
    const headers: Record<string, string> = {};
    let key = '';
    for (const [name, values] of message.headers ?? []) {
      const value = values[values.length - 1] ?? '';
      if (name === KEY_HEADER) key = value;
      else if (!isReservedHeader(name)) headers[name] = value;
    }
    return { topic, partition, offset: String(message.seq), key, headers, value: message.data };
  };

  /** Hands a message back at once (instead of after ack_wait); fails harmlessly on a closed connection. */
  const handBack = (message: JsMsg): void => {
    try {
      message.nak();
    } catch (error) {
      logger.debug({ err: error }, 'could not hand a message back');
    }
  };

  /** Handles what one pull subscription delivers until it ends; returns how many messages it handled. */
  const pullMessages = async (
    consumer: Consumer,
    topic: string,
    partition: number,
    handler: SubscribeOptions['handler'],
    signal: AbortSignal,
  ): Promise<number> => {
    // max_ack_pending 1 lets JetStream send one message at a time whatever the batch; a batch of 1 only made the
    // client send a new pull request after every message (one more request per message and group for the
    // server). With 100, it asks again after 25 messages: the same deliveries, one at a time, in order.
    const messages = await consumer.consume({ max_messages: PULL_BATCH, expires: pullExpiresMs });
    const stop = (): void => void messages.close();
    signal.addEventListener('abort', stop, { once: true });
    let handled = 0;
    try {
      for await (const message of messages) {
        if (signal.aborted) {
          handBack(message);
          continue;
        }
        // max_ack_pending 1 (see the factory's comment) makes every batch one message long on NATS.
        const batch = { topic, partition, messages: [toDelivered(topic, partition, message)] };
        const outcome = await deliverUntilHandled(batch, handler, {
          retry,
          signal,
          logger,
          keepAlive: { intervalMs: Math.max(100, Math.floor(ackWaitMs / 3)), beat: () => message.working() },
        });
        if (outcome === 'abandoned') {
          handBack(message);
          continue;
        }
        handled++;
        if (nc.isClosed()) continue; // nothing can be acknowledged any more; JetStream will redeliver it
        await message.ackAck({ timeout: requestTimeoutMs }).catch((error: unknown) => {
          // JetStream redelivers it after ack_wait: a duplicate, which consumers tolerate.
          logger.warn({ err: error, topic, partition, offset: message.seq }, 'acknowledgement failed');
        });
      }
    } finally {
      signal.removeEventListener('abort', stop);
    }
    return handled;
  };

  /** Keeps a partition's pull subscription going until the subscription or the connection closes. */
  const consumePartition = async (
    consumer: Consumer,
    topic: string,
    partition: number,
    handler: SubscribeOptions['handler'],
    signal: AbortSignal,
  ): Promise<void> => {
    for (let attempt = 1; !signal.aborted && !nc.isClosed(); attempt++) {
      try {
        if ((await pullMessages(consumer, topic, partition, handler, signal)) > 0) attempt = 1;
      } catch (error) {
        logger.warn({ err: error, topic, partition }, 'pulling from JetStream failed; retrying');
      }
      await pause(retryDelayMs(retry, attempt), signal);
    }
  };

  const subscribe = async ({
    topic,
    group,
    from = 'beginning',
    handler,
    maxBatch,
  }: SubscribeOptions): Promise<Subscription> => {
    assertTopic(topic);
    assertGroup(group);
    maxBatchOf(maxBatch);
    if (closed) throw new Error('the event log is closed');
    const stream = await ensureStream(topic);
    const consumers = await Promise.all(
      Array.from({ length: partitions }, (_, partition) =>
        ensureConsumer(stream, topic, group, partition, from),
      ),
    );
    const controller = new AbortController();
    const loops = consumers.map((consumer, partition) =>
      consumePartition(consumer, topic, partition, handler, controller.signal),
    );
    const subscription: Subscription = {
      close: async () => {
        controller.abort();
        await Promise.all(loops);
        subscriptions.delete(subscription);
      },
    };
    subscriptions.add(subscription);
    return subscription;
  };

  const publishPartition = async (js: JetStreamClient, subject: string, messages: readonly LogMessage[]) => {
    // One at a time: if one fails, the ones after it were not sent, so a retry keeps the order per key.
    for (const message of messages) {
      const headers = natsHeaders();
      for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
      headers.set(KEY_HEADER, message.key);
      const eventId = message.headers['ce_id'];
      await js.publish(subject, message.value, {
        headers,
        timeout: requestTimeoutMs,
        // The outbox relay re-publishes after a crash; JetStream drops the copy within the duplicate window.
        ...(eventId ? { msgID: eventId } : {}),
      });
    }
  };

  const publish = async (topic: string, messages: readonly LogMessage[]): Promise<void> => {
    assertMessages(topic, messages);
    for (const message of messages) {
      const reserved = Object.keys(message.headers).find(isReservedHeader);
      if (reserved) throw new TypeError(`header ${reserved} is reserved by the NATS event log`);
    }
    if (closed) throw new Error('the event log is closed');
    if (messages.length === 0) return;
    await ensureStream(topic);
    const results = await Promise.allSettled(
      [...groupByPartition(messages, partitions)].map(([partition, batch]) =>
        publishPartition(js, subjectOf(topic, partition), batch),
      ),
    );
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  };

  return {
    publish,
    subscribe,
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((subscription) => subscription.close()));
      if (ownsConnection) {
        await withTimeout(nc.drain(), requestTimeoutMs, 'draining the NATS connection').catch(() =>
          nc.close(),
        );
      }
    },
  };
};
