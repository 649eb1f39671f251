import { randomUUID } from 'node:crypto';
import { connect, headers as natsHeaders, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstreamManager,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { migrate, quoteIdent, type Database } from '@marketplace/database';
import { createLogger, type Logger } from '@marketplace/platform';
import {
  DEFAULT_BATCH_INTERVAL_MS,
  DEFAULT_MAX_BATCH,
  partitionOf,
  type DeliveredMessage,
  type EventLog,
  type LogMessage,
  type ConsumeOptions,
  type FollowOptions,
  type LogConsumer,
} from './eventlog.port.js';
import { DEFAULT_RETRY_POLICY, retryDelayMs, type RetryPolicy } from './delivery.js';
import { EMBEDDED_EVENT_LOG_MIGRATIONS } from './embedded.schema.js';
import { Follower } from './follower.js';
import { LeasedGroupMember, deleteGroupRows, type GroupMemberSettings } from './leased.group-member.js';
import {
  startTracked,
  type PartitionReadSettings,
  type PartitionReader,
  type PartitionSource,
} from './partition-worker.js';
import { pause, withTimeout } from './timing.js';
import { assertDuration, assertGroup, assertMessages, assertPartitions, assertTopic } from './validation.js';
import { WakeUp } from './wake-up.js';

export interface NatsEventLogOptions {
  /** Server URLs, as a list or a comma-separated string. Required unless `connection` is given. */
  readonly servers?: string | readonly string[];
  /** An open connection to use instead of `servers`; its owner closes it (`close()` leaves it open). */
  readonly connection?: NatsConnection;
  /**
   * The consuming service's database: its consumer groups' offsets and partition leases are rows there
   * (`consumer_offsets`, `group_members` of `schema`, created on first consume), so a partition has one
   * owner. Required to consume; a client that only publishes needs none.
   */
  readonly db?: Database;
  /** The schema of those tables; default `eventlog` (the embedded log's, whose tables they are). */
  readonly schema?: string;
  /** Partitions per topic (subjects `<topic>.0` … `<topic>.<n-1>`); every client of a topic must agree. */
  readonly partitions?: number;
  /** How long a member's lease on a partition lasts unrenewed: a crashed member's partitions move after it. */
  readonly leaseMs?: number;
  /** Messages read ahead per owned partition, and so the most per batch (`maxBatch` may ask for fewer). */
  readonly batchSize?: number;
  /**
   * The least time between the starts of two short batches of a partition, so that a busy partition's messages
   * are handed over several at a time (default `DEFAULT_BATCH_INTERVAL_MS`; 0: each read at once).
   */
  readonly batchIntervalMs?: number;
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
/**
 * The durable pull consumer per (group, partition) that held a group's position before the offsets moved to the
 * database (`catalog-p3`): a group new to the database starts after its acknowledged floor.
 */
export const durableNameOf = (group: string, partition: number): string => `${group}-p${partition}`;
/** The partition count travels in the stream description, so a client configured differently fails loudly. */
export const streamDescriptionOf = (partitions: number): string => `eventlog partitions=${partitions}`;

/** Core NATS subject on which members of a group tell each other that membership changed. */
const membersSubjectOf = (topic: string, group: string): string =>
  `_eventlog.members.${streamNameOf(topic)}.${group}`;

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

/** A publish refused because another message reached the stream in between (Nats-Expected-Last-Msg-Id). */
const WRONG_LAST_MSG_ID = 10070;

/**
 * The EventLog on NATS JetStream. One file-backed stream per topic with one subject per partition. A consumer
 * group's partitions are leased to its members in PostgreSQL (`LeasedGroupMember`, as in the embedded log): the
 * owner of a partition reads it with an ordered consumer from after the group's committed offset, hands over
 * batches of what has arrived (up to `maxBatch`) and commits each batch's last offset in one statement, which also
 * renews its lease. A crashed member stops renewing, so its partitions move after `leaseMs`, and the new owner
 * starts after the committed offset (see docs/architecture.md, the batched pipeline). A follower reads every
 * partition the same way from the stream's end, with its positions in memory: nothing in the database, and
 * ordered consumers only, which it deletes when it closes (JetStream drops them after 5 minutes of inactivity
 * when the process dies).
 */
export const createNatsEventLog = async (options: NatsEventLogOptions): Promise<EventLog> => {
  const { db } = options;
  const partitions = options.partitions ?? 8;
  assertPartitions(partitions);
  const schema = options.schema ?? 'eventlog';
  const quoted = quoteIdent(schema);
  const leaseMs = options.leaseMs ?? 30_000;
  const batchSize = options.batchSize ?? DEFAULT_MAX_BATCH;
  const batchIntervalMs = options.batchIntervalMs ?? DEFAULT_BATCH_INTERVAL_MS;
  assertDuration('batchIntervalMs', batchIntervalMs, 0);
  const requestTimeoutMs = options.requestTimeoutMs ?? 5_000;
  const pullExpiresMs = options.pullExpiresMs ?? 10_000;
  const duplicateWindowMs = options.duplicateWindowMs ?? 120_000;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  assertDuration('connectTimeoutMs', connectTimeoutMs);
  assertDuration('leaseMs', leaseMs, 100);
  assertDuration('requestTimeoutMs', requestTimeoutMs);
  assertDuration('pullExpiresMs', pullExpiresMs, 1_000); // a JetStream minimum
  assertDuration('duplicateWindowMs', duplicateWindowMs);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new RangeError(`invalid batchSize ${batchSize}: expected an integer from 1 to 10000`);
  }
  const retry = options.retry ?? DEFAULT_RETRY_POLICY;
  const logger = options.logger ?? createLogger({ service: 'eventlog-nats' });

  const nc =
    options.connection ??
    (await connect({
      servers: serverList(options.servers),
      timeout: connectTimeoutMs,
      // A service rides out a broker restart instead of giving up after the default ten attempts.
      maxReconnectAttempts: -1,
      // Otherwise every request (each publish) builds an Error up front for the stack of a timeout it may never
      // have: a few percent of the CPU per message in the profiles. Timeouts and failures are still raised.
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
  const members = new Set<LeasedGroupMember>();
  const followers = new Set<Follower>();
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

  /**
   * Reads one partition for its owner: an ordered consumer (ephemeral, no acknowledgements, recreated from the
   * last message seen after a gap or a reconnect) fills a buffer of at most `batchSize` messages, and each read
   * takes what is there. The consumer is deleted when the reader stops or starts over, rather than left for
   * JetStream to drop after its 5 minutes of inactivity.
   */
  const openReader = (
    topic: string,
    partition: number,
    after: string,
    wake: WakeUp,
    signal: AbortSignal,
  ): PartitionReader => {
    const buffer: DeliveredMessage[] = [];
    const drained = new WakeUp();
    const stopping = new AbortController();
    const stop = AbortSignal.any([signal, stopping.signal]);
    let next = Number(after) + 1;
    const pump = async (): Promise<void> => {
      for (let attempt = 1; !stop.aborted && !nc.isClosed(); attempt++) {
        try {
          const consumer = await js.consumers.get(streamNameOf(topic), {
            // One subject as a string: a list needs a 2.10 server.
            filter_subjects: subjectOf(topic, partition),
            deliver_policy: DeliverPolicy.StartSequence,
            opt_start_seq: next,
          });
          try {
            const messages = await consumer.consume({ max_messages: batchSize, expires: pullExpiresMs });
            const close = (): void => void messages.close();
            stop.addEventListener('abort', close, { once: true });
            // Stopped while the consumer was being set up: the listener came too late to fire, and the loop
            // below would wait for messages for ever (a member closed right after it joined never closed).
            if (stop.aborted) close();
            try {
              for await (const message of messages) {
                if (stop.aborted) break;
                buffer.push(toDelivered(topic, partition, message));
                next = message.seq + 1;
                attempt = 1;
                wake.notify();
                while (buffer.length >= batchSize && !stop.aborted) {
                  await drained.wait(drained.generation, pullExpiresMs, stop);
                }
              }
            } finally {
              stop.removeEventListener('abort', close);
              close();
            }
          } finally {
            const deleted = withTimeout(
              consumer.delete(),
              requestTimeoutMs,
              'deleting an ordered consumer',
            ).catch((error: unknown) =>
              logger.debug({ err: error, topic, partition }, 'ordered consumer not deleted'),
            );
            // Awaited when the reader stops, so that a closed reader leaves nothing; a retry does not wait on it.
            if (stop.aborted) await deleted;
          }
        } catch (error) {
          logger.warn({ err: error, topic, partition }, 'reading from JetStream failed; retrying');
        }
        await pause(retryDelayMs(retry, attempt), stop);
      }
    };
    const pumping = pump();
    return {
      read: async (limit) => {
        const taken = buffer.splice(0, limit);
        if (taken.length > 0) drained.notify();
        return taken;
      },
      close: async () => {
        stopping.abort();
        await pumping;
      },
    };
  };

  /** The stream's last sequence, for every partition: each reads its own subject after it. */
  const endOffsets = async (topic: string): Promise<readonly string[]> => {
    const last = String((await jsm.streams.info(streamNameOf(topic))).state.last_seq);
    return Array.from({ length: partitions }, () => last);
  };

  /** Where a group new to the database starts: after its legacy durable consumer's floor, else by `from`. */
  const startOffsets = async (
    topic: string,
    group: string,
    from: 'beginning' | 'latest',
  ): Promise<readonly string[]> => {
    const stream = streamNameOf(topic);
    const legacy = await Promise.all(
      Array.from({ length: partitions }, async (_, partition) => {
        try {
          const info = await jsm.consumers.info(stream, durableNameOf(group, partition));
          return String(info.ack_floor.stream_seq);
        } catch (error) {
          if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) return undefined;
          throw error;
        }
      }),
    );
    const latest = from === 'latest' ? await endOffsets(topic) : undefined;
    return legacy.map((offset, partition) => offset ?? latest?.[partition] ?? '0');
  };

  const source: PartitionSource = { startOffsets, endOffsets, openReader };
  let migrated: Promise<void> | undefined;
  /** The group tables, created on first use; consuming needs the database. */
  const settingsOf = async (): Promise<GroupMemberSettings> => {
    if (db === undefined) throw new TypeError('consuming the NATS event log needs `db`');
    const ready = (migrated ??= migrate(db, schema, EMBEDDED_EVENT_LOG_MIGRATIONS).then(() => {}));
    ready.catch(() => {
      migrated = undefined;
    });
    await ready;
    return { ...settings, db };
  };
  const readSettings: PartitionReadSettings = {
    source,
    // Only a backstop: the reader rings its owner when a message arrives.
    pollIntervalMs: pullExpiresMs,
    batchSize,
    batchIntervalMs,
    retry,
    logger,
  };
  const settings: Omit<GroupMemberSettings, 'db'> = {
    ...readSettings,
    tables: { offsets: `${quoted}.consumer_offsets`, members: `${quoted}.group_members` },
    connected: () => !nc.isClosed(),
    partitions,
    leaseMs,
    announceMembership: async (topic, group) => {
      if (!nc.isClosed()) nc.publish(membersSubjectOf(topic, group));
    },
  };
  const membershipNews = nc.subscribe('_eventlog.members.>', {
    callback: (error, message) => {
      if (error) return;
      for (const member of members) {
        if (message.subject === membersSubjectOf(member.topic, member.group)) member.requestRebalance();
      }
    },
  });

  const consume = async (consumeOptions: ConsumeOptions): Promise<LogConsumer> => {
    assertTopic(consumeOptions.topic);
    assertGroup(consumeOptions.group);
    if (closed) throw new Error('the event log is closed');
    await ensureStream(consumeOptions.topic);
    const memberSettings = await settingsOf();
    // Closed while this waited: a member started now would run on a closed log, with no one to stop it.
    if (closed) throw new Error('the event log is closed');
    const member = new LeasedGroupMember(memberSettings, consumeOptions);
    return startTracked(members, member, () => member.join());
  };

  const follow = async (followOptions: FollowOptions): Promise<LogConsumer> => {
    assertTopic(followOptions.topic);
    if (closed) throw new Error('the event log is closed');
    await ensureStream(followOptions.topic);
    if (closed) throw new Error('the event log is closed');
    const follower = new Follower(readSettings, followOptions);
    return startTracked(followers, follower, () => follower.start());
  };

  const headersOf = (message: LogMessage) => {
    const headers = natsHeaders();
    for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
    headers.set(KEY_HEADER, message.key);
    return headers;
  };

  /**
   * Sends the messages at once and awaits their acknowledgements together. Each one after the first expects the
   * one before it to be the stream's last (Nats-Expected-Last-Msg-Id), so what the stream stored is always a
   * prefix, in order: once one is lost or refused, every later one is refused. Resolves to how many were stored
   * and the first failure's error.
   */
  const publishChain = async (
    topic: string,
    messages: readonly LogMessage[],
  ): Promise<{ stored: number; error?: unknown }> => {
    let previous: string | undefined;
    const acks = messages.map((message) => {
      // The relay re-publishes after a crash; JetStream drops the copy within the duplicate window.
      const msgID = message.headers['ce_id'] ?? randomUUID();
      const ack = js.publish(subjectOf(topic, partitionOf(message.key, partitions)), message.value, {
        headers: headersOf(message),
        timeout: requestTimeoutMs,
        msgID,
        ...(previous === undefined ? {} : { expect: { lastMsgID: previous } }),
      });
      previous = msgID;
      return ack;
    });
    const results = await Promise.allSettled(acks);
    const failed = results.findIndex((result) => result.status === 'rejected');
    if (failed === -1) return { stored: messages.length };
    return { stored: failed, error: (results[failed] as PromiseRejectedResult).reason };
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
    let rest = messages;
    while (rest.length > 0) {
      const { stored, error } = await publishChain(topic, rest);
      // Refused for a message another publisher put in between: the rest goes again, as a new chain.
      if (stored < rest.length && (stored === 0 || !isApiError(error, WRONG_LAST_MSG_ID))) throw error;
      rest = rest.slice(stored);
    }
  };

  /**
   * The group's rows in the consumers' database, and the durable consumers (`<group>-p<n>`) it may still have from
   * before its offsets moved there: a durable consumer left behind keeps its position on the stream for ever.
   */
  const deleteGroup = async (topic: string, group: string): Promise<void> => {
    assertTopic(topic);
    assertGroup(group);
    if (closed) throw new Error('the event log is closed');
    if (db !== undefined) {
      const { tables } = await settingsOf();
      await deleteGroupRows(db, tables, members, topic, group);
    } else if ([...members].some((member) => member.topic === topic && member.group === group)) {
      throw new Error(
        `the group ${group} still consumes ${topic} here: close its consumer before deleting it`,
      );
    }
    const stream = streamNameOf(topic);
    await Promise.all(
      Array.from({ length: partitions }, async (_, partition) => {
        try {
          await jsm.consumers.delete(stream, durableNameOf(group, partition));
        } catch (error) {
          const gone =
            isApiError(error, JetStreamApiCodes.ConsumerNotFound) ||
            isApiError(error, JetStreamApiCodes.StreamNotFound);
          if (!gone) throw error;
        }
      }),
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
      const leaving = [...members];
      members.clear();
      const following = [...followers];
      followers.clear();
      await Promise.all([...leaving, ...following].map((consumer) => consumer.close()));
      membershipNews.unsubscribe();
      if (ownsConnection) {
        await withTimeout(nc.drain(), requestTimeoutMs, 'draining the NATS connection').catch(() =>
          nc.close(),
        );
      }
    },
  };
};
