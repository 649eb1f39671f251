import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { migrate, quoteIdent, type Database, type Transaction } from '@marketplace/database';
import { createLogger, type Logger } from '@marketplace/platform';
import {
  DEFAULT_BATCH_INTERVAL_MS,
  DEFAULT_MAX_BATCH,
  type DeliveredMessage,
  type EventLog,
  type LogMessage,
  type ConsumeOptions,
  type FollowOptions,
  type LogConsumer,
  partitionOf,
} from './eventlog.port.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './delivery.js';
import { Follower } from './follower.js';
import {
  LeasedGroupMember,
  deleteGroupRows,
  type GroupMemberSettings,
  type GroupTables,
} from './leased.group-member.js';
import { startTracked, type PartitionSource } from './partition-worker.js';
import { EMBEDDED_EVENT_LOG_MIGRATIONS } from './embedded.schema.js';
import { assertDuration, assertGroup, assertMessages, assertPartitions, assertTopic } from './validation.js';

export interface EmbeddedEventLogOptions {
  /** Where the log lives: PGlite for `pnpm start`, or a PostgreSQL server. */
  readonly db: Database;
  /** The schema of the log's tables (created and migrated on start). */
  readonly schema?: string;
  /** Partitions per topic; every client of a topic must agree (checked against the first one's). */
  readonly partitions?: number;
  /**
   * How often an idle partition looks for messages whose wake-up it missed. Only a backstop: in-process
   * wake-ups are never lost, and NOTIFY only while a listener reconnects.
   */
  readonly pollIntervalMs?: number;
  /** How long a member's claim on a partition lasts unrenewed: a crashed member's partitions move after it. */
  readonly leaseMs?: number;
  /** Messages read per query, and so the most per batch (a consumer's `maxBatch` may ask for fewer). */
  readonly batchSize?: number;
  /**
   * The least time between the starts of two short batches of a partition, so that a busy partition's messages
   * are handed over several at a time (default `DEFAULT_BATCH_INTERVAL_MS`; 0: each read at once).
   */
  readonly batchIntervalMs?: number;
  /**
   * This process is the only one using the log (PGlite: one process per data directory). Partition claims and
   * memberships found at open then belong to an earlier run that died, and are released at once instead of
   * after their lease: a restart after a crash resumes consuming immediately.
   */
  readonly soleProcess?: boolean;
  readonly retry?: RetryPolicy;
  readonly logger?: Logger;
}

/** A reader's ask: the messages of a partition after an offset, at most `limit`. */
interface PartitionRead {
  readonly topic: string;
  readonly partition: number;
  readonly after: string;
  readonly limit: number;
}

interface MessageRow extends Record<string, unknown> {
  offset: string;
  key: string;
  headers: Record<string, string>;
  value: Uint8Array;
}

/**
 * Wake-ups between the logs of one process that share a schema (the all-in-one runner opens one per service),
 * delivered at once instead of after a round trip through NOTIFY.
 */
const localWakeUps = new Map<string, EventEmitter>();
const localWakeUpsOf = (schema: string): EventEmitter => {
  let emitter = localWakeUps.get(schema);
  if (!emitter) {
    emitter = new EventEmitter().setMaxListeners(0);
    localWakeUps.set(schema, emitter);
  }
  return emitter;
};

/**
 * This process, in the notes it sends over NOTIFY. Its own logs were already woken through `localWakeUps`, so
 * it drops its own notes when they come back: that second wake-up, arriving while a reader was reading, sent
 * the reader back for an empty read (about one per message and group on PGlite, where every publish comes back).
 */
const PROCESS_ORIGIN = randomUUID();

/**
 * Wake-up notes, the same in-process and over NOTIFY: `messages <topic> <p,p,…>` or `members <topic> <group>`;
 * over NOTIFY followed by the sender's PROCESS_ORIGIN (a reader of another version ignores the extra field).
 */
const messagesNote = (topic: string, partitions: readonly number[]): string =>
  `messages ${topic} ${partitions.join(',')}`;
const membersNote = (topic: string, group: string): string => `members ${topic} ${group}`;

/**
 * The EventLog stored through the Database port: the log `pnpm start` uses on PGlite, fed by the services'
 * outbox relays, and usable on a PostgreSQL server by several processes. Messages are rows of one table,
 * numbered by a sequence; a publish holds a lock per partition until it commits, so a partition's offsets
 * become visible in increasing order and a reader never skips a late commit. Consumer groups are
 * `LeasedGroupMember`s; a follower reads with its positions in memory and stores nothing. Readers wake on in-process calls, on NOTIFY from other processes, and poll as a
 * backstop.
 */
export const createEmbeddedEventLog = async (options: EmbeddedEventLogOptions): Promise<EventLog> => {
  const { db } = options;
  const schema = options.schema ?? 'eventlog';
  const quoted = quoteIdent(schema);
  const channel = `${schema}_wakeup`;
  quoteIdent(channel);
  const partitions = options.partitions ?? 8;
  assertPartitions(partitions);
  const leaseMs = options.leaseMs ?? 15_000;
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
  const batchSize = options.batchSize ?? DEFAULT_MAX_BATCH;
  const batchIntervalMs = options.batchIntervalMs ?? DEFAULT_BATCH_INTERVAL_MS;
  assertDuration('batchIntervalMs', batchIntervalMs, 0);
  assertDuration('leaseMs', leaseMs, 100);
  assertDuration('pollIntervalMs', pollIntervalMs, 10);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new RangeError(`invalid batchSize ${batchSize}: expected an integer from 1 to 10000`);
  }
  const logger = options.logger ?? createLogger({ service: 'eventlog-embedded' });
  const messagesTable = `${quoted}.messages`;
  const tables: GroupTables = {
    offsets: `${quoted}.consumer_offsets`,
    members: `${quoted}.group_members`,
  };

  await migrate(db, schema, EMBEDDED_EVENT_LOG_MIGRATIONS);
  if (options.soleProcess) {
    await db.transaction(async (tx) => {
      await tx.query(`update ${tables.offsets} set owner = null, lease_until = null where owner is not null`);
      await tx.query(`delete from ${tables.members}`);
    });
  }

  const members = new Set<LeasedGroupMember>();
  const followers = new Set<Follower>();
  const topicsChecked = new Map<string, Promise<void>>();
  let closed = false;

  const onWakeUp = (note: string): void => {
    const [kind, topic, detail = ''] = note.split(' ');
    if (kind === 'messages') {
      for (const follower of followers) {
        if (follower.topic === topic) follower.messagesArrived(detail.split(',').map(Number));
      }
    }
    for (const member of members) {
      if (member.topic !== topic) continue;
      if (kind === 'messages') member.messagesArrived(detail.split(',').map(Number));
      else if (kind === 'members' && member.group === detail) member.requestRebalance();
    }
  };
  const local = localWakeUpsOf(schema);
  local.on('wake', onWakeUp);
  // The sole process has no other process to wake: its own logs are woken in process (`localWakeUps`), and its
  // own notes would come back only to be dropped. So it neither listens nor notifies.
  const notifies = options.soleProcess !== true;
  let unlisten: () => Promise<void> = async () => {};
  if (notifies) {
    try {
      unlisten = await db.listen(channel, (note) => {
        if (note.split(' ')[3] !== PROCESS_ORIGIN) onWakeUp(note);
      });
    } catch (error) {
      local.off('wake', onWakeUp);
      throw error;
    }
  }

  const wakeUp = async (note: string, tx: Transaction = db): Promise<void> => {
    if (!notifies) return;
    await tx.query('select pg_notify($1, $2)', [channel, `${note} ${PROCESS_ORIGIN}`]);
  };
  // PGlite is one session whose transactions run one at a time (docs/architecture.md, "Embedded mode"), so no
  // other publish can draw offsets while this one's are uncommitted: the partition locks would lock nothing.
  const locksPartitions = db.engine !== 'pglite';

  /**
   * Reads of partitions asked for while a read runs go together in the next statement: a member's partitions,
   * read on one round (see the group member), cost one statement instead of one each.
   */
  let reads: {
    read: PartitionRead;
    resolve: (rows: MessageRow[]) => void;
    reject: (error: unknown) => void;
  }[] = [];
  let reading = false;
  const readWaiting = async (): Promise<void> => {
    reading = true;
    try {
      while (reads.length > 0) {
        const taken = reads;
        reads = [];
        try {
          const { rows } = await db.query<MessageRow & { read: number }>(
            `select r.n::int as read, m."offset", m.key, m.headers, m.value
             from unnest($1::text[], $2::int[], $3::bigint[], $4::int[]) with ordinality
               as r(topic, partition, after, lim, n)
             cross join lateral (
               select "offset", key, headers, value from ${messagesTable}
               where topic = r.topic and partition = r.partition and "offset" > r.after
               order by "offset" limit r.lim
             ) m
             order by r.n, m."offset"`,
            [
              taken.map(({ read }) => read.topic),
              taken.map(({ read }) => read.partition),
              taken.map(({ read }) => read.after),
              taken.map(({ read }) => read.limit),
            ],
          );
          const answers = taken.map((): MessageRow[] => []);
          for (const row of rows) answers[row.read - 1]!.push(row);
          taken.forEach((entry, i) => entry.resolve(answers[i]!));
        } catch (error) {
          for (const entry of taken) entry.reject(error);
        }
      }
    } finally {
      reading = false;
    }
  };
  const readMessages = (read: PartitionRead): Promise<MessageRow[]> =>
    new Promise((resolve, reject) => {
      reads.push({ read, resolve, reject });
      if (!reading) void readWaiting();
    });

  const endOffsets = async (topic: string): Promise<readonly string[]> => {
    const { rows } = await db.query<{ last: string }>(
      `select coalesce((select max(m."offset") from ${messagesTable} m where m.topic = $1 and m.partition = p), 0)
         as last
       from generate_series(0, $2 - 1) as p order by p`,
      [topic, partitions],
    );
    return rows.map((row) => String(row.last));
  };
  const source: PartitionSource = {
    startOffsets: async (topic, _group, from) =>
      from === 'beginning' ? Array.from({ length: partitions }, () => '0') : endOffsets(topic),
    endOffsets,
    openReader: (topic, partition, after) => {
      let last = after;
      return {
        read: async (limit) => {
          const rows = await readMessages({ topic, partition, after: last, limit });
          last = rows.at(-1)?.offset ?? last;
          return rows.map((row): DeliveredMessage => ({
            topic,
            partition,
            offset: row.offset,
            key: row.key,
            headers: row.headers,
            value: new Uint8Array(row.value),
          }));
        },
        close: async () => {},
      };
    },
  };

  const settings: GroupMemberSettings = {
    db,
    tables,
    source,
    partitions,
    leaseMs,
    pollIntervalMs,
    batchSize,
    batchIntervalMs,
    retry: options.retry ?? DEFAULT_RETRY_POLICY,
    logger,
    announceMembership: async (topic, group) => {
      local.emit('wake', membersNote(topic, group));
      await wakeUp(membersNote(topic, group));
    },
  };

  /** Records the topic's partition count on first use, and refuses a client that counts differently. */
  const checkTopic = (topic: string): Promise<void> => {
    let checked = topicsChecked.get(topic);
    if (!checked) {
      checked = (async () => {
        await db.query(
          `insert into ${quoted}.topics (topic, partitions) values ($1, $2) on conflict do nothing`,
          [topic, partitions],
        );
        const { rows } = await db.query<{ partitions: number }>(
          `select partitions from ${quoted}.topics where topic = $1`,
          [topic],
        );
        const recorded = rows[0]?.partitions;
        if (recorded !== partitions) {
          throw new Error(`topic ${topic} has ${recorded} partitions, but this client uses ${partitions}`);
        }
      })();
      topicsChecked.set(topic, checked);
      checked.catch(() => topicsChecked.delete(topic));
    }
    return checked;
  };

  /**
   * One statement draws an offset per message and inserts them: the k-th message gets the k-th smallest offset
   * drawn, so each partition's messages keep their order. `drawn` is evaluated once (a CTE with a volatile
   * function is materialized), whatever order the sequence hands its values out in.
   */
  const insertMessages = `
    with drawn as materialized (
      select nextval('${quoted}.message_offset') as "offset" from generate_series(1, cardinality($2::int[]))
    ), numbered as (
      select "offset", row_number() over (order by "offset") as n from drawn
    )
    insert into ${messagesTable} (topic, partition, "offset", key, headers, value)
    select $1, m.partition, numbered."offset", m.key, m.headers, m.value
    from unnest($2::int[], $3::text[], $4::jsonb[], $5::bytea[]) with ordinality
      as m (partition, key, headers, value, n)
    join numbered on numbered.n = m.n`;

  const publish = async (topic: string, messages: readonly LogMessage[]): Promise<void> => {
    assertMessages(topic, messages);
    if (closed) throw new Error('the event log is closed');
    if (messages.length === 0) return;
    await checkTopic(topic);
    const partitionOfEach = messages.map((message) => partitionOf(message.key, partitions));
    const touched = [...new Set(partitionOfEach)].sort((a, b) => a - b);
    const params = [
      topic,
      partitionOfEach,
      messages.map((message) => message.key),
      messages.map((message) => JSON.stringify(message.headers)),
      messages.map((message) => message.value),
    ];
    if (!locksPartitions && !notifies) {
      // The sole process on PGlite: one statement is atomic, and nothing runs beside it (see locksPartitions).
      await db.query(insertMessages, params);
    } else {
      await db.transaction(async (tx) => {
        // Held until commit, in a fixed order (no deadlock): offsets of a partition are drawn, and become
        // visible, in commit order, so a reader at offset N never later finds a smaller one committed behind it.
        for (const partition of locksPartitions ? touched : []) {
          await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
            `${schema}:${topic}:${partition}`,
          ]);
        }
        await tx.query(insertMessages, params);
        await wakeUp(messagesNote(topic, touched), tx);
      });
    }
    local.emit('wake', messagesNote(topic, touched));
  };

  const consume = async (options: ConsumeOptions): Promise<LogConsumer> => {
    assertTopic(options.topic);
    assertGroup(options.group);
    if (closed) throw new Error('the event log is closed');
    await checkTopic(options.topic);
    // Closed while this waited: a member started now would run on a closed log, with no one to stop it.
    if (closed) throw new Error('the event log is closed');
    const member = new LeasedGroupMember(settings, options);
    return startTracked(members, member, () => member.join());
  };

  const follow = async (options: FollowOptions): Promise<LogConsumer> => {
    assertTopic(options.topic);
    if (closed) throw new Error('the event log is closed');
    await checkTopic(options.topic);
    if (closed) throw new Error('the event log is closed');
    const follower = new Follower(settings, options);
    return startTracked(followers, follower, () => follower.start());
  };

  const deleteGroup = async (topic: string, group: string): Promise<void> => {
    assertTopic(topic);
    assertGroup(group);
    if (closed) throw new Error('the event log is closed');
    await deleteGroupRows(db, tables, members, topic, group);
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
      local.off('wake', onWakeUp);
      if (local.listenerCount('wake') === 0) localWakeUps.delete(schema);
      await unlisten().catch((error: unknown) => logger.debug({ err: error }, 'unlisten failed'));
    },
  };
};
