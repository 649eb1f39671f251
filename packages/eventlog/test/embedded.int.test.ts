import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { dropSchema, freshSchemaName, contractTestEngines } from '@marketplace/database/testing';
import type { EventLog } from '../src/eventlog.port.js';
import { eachMessage, partitionOf } from '../src/eventlog.port.js';
import { createEmbeddedEventLog, type EmbeddedEventLogOptions } from '../src/embedded.event-log.js';
import { describeEventLogContract } from '../src/testing/index.js';
import { groupRowsOf } from './group-rows.js';

/**
 * A handle on a shared database that can be cut off, as a crashed process's connection would be: every call
 * after `sever()` fails. Closing it leaves the shared database open.
 */
const severable = (db: Database): { db: Database; sever: () => void } => {
  let severed = false;
  const alive = () => {
    if (severed) throw new Error('connection lost (simulated crash)');
  };
  return {
    sever: () => {
      severed = true;
    },
    db: {
      engine: db.engine,
      query: async (sql, params) => {
        alive();
        return db.query(sql, params);
      },
      transaction: async (work, options) => {
        alive();
        return db.transaction(work, options);
      },
      listen: async (channel, onNotify) => {
        alive();
        return db.listen(channel, onNotify);
      },
      withAdvisoryLock: async (key, work, options) => {
        alive();
        return db.withAdvisoryLock(key, work, options);
      },
      afterCommit: (callback) => db.afterCommit(callback),
      close: async () => {},
    },
  };
};

/**
 * A handle on a shared database that counts the reads of a partition's messages, and the statements that move a
 * group's committed offset.
 */
const countingPartitionReads = (
  db: Database,
): { counting: Database; reads: () => number; commits: () => number } => {
  let reads = 0;
  let commits = 0;
  return {
    reads: () => reads,
    commits: () => commits,
    counting: {
      engine: db.engine,
      query: async (sql, params) => {
        if (sql.includes('.messages') && sql.includes('order by "offset" limit')) reads++;
        if (/committed_offset = (greatest|case)/.test(sql)) commits++;
        return db.query(sql, params);
      },
      transaction: async (work, options) => db.transaction(work, options),
      listen: async (channel, onNotify) => db.listen(channel, onNotify),
      withAdvisoryLock: async (key, work, options) => db.withAdvisoryLock(key, work, options),
      afterCommit: (callback) => db.afterCommit(callback),
      close: async () => {},
    },
  };
};

const waitUntil = async (done: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/** Consumes `topic` as `group`; the keys delivered, in order, as they come. */
const keysConsumed = async (log: EventLog, topic: string, group: string): Promise<string[]> => {
  const keys: string[] = [];
  await log.consume({
    topic,
    group,
    handler: eachMessage(async (delivered) => {
      keys.push(delivered.key);
    }),
  });
  return keys;
};

const fastSettings: Partial<EmbeddedEventLogOptions> = {
  leaseMs: 1_000,
  // Longer than any test: deliveries must come from wake-ups, not from the backstop poll.
  pollIntervalMs: 60_000,
  retry: { initialDelayMs: 20, maxDelayMs: 200 },
};

describe.each(contractTestEngines())('embedded event log on $name', ({ create }) => {
  const schema = freshSchemaName('eventlog_test');
  let db: Database;
  beforeAll(async () => {
    db = await create();
  }, 60_000);
  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  const severers = new Map<EventLog, () => void>();
  describeEventLogContract(`embedded`, {
    open: async () => {
      const client = severable(db);
      const log = await createEmbeddedEventLog({ db: client.db, schema, ...fastSettings });
      severers.set(log, client.sever);
      return log;
    },
    crash: async (log) => severers.get(log)!(),
    crashDetectionMs: 3_000,
    consumerStateOf: (topic) => groupRowsOf(db, schema, topic),
  });

  const open = (options: Partial<EmbeddedEventLogOptions> = {}) =>
    createEmbeddedEventLog({ db, schema, ...fastSettings, ...options });
  const message = (key: string, seq: number) => ({
    key,
    value: new TextEncoder().encode(String(seq)),
    headers: { ce_id: `${key}/${seq}` },
  });

  it('follows a topic without a statement on the group tables, so a process that dies leaves nothing there', async () => {
    const topic = 'embedded.follower.v1';
    const statements: string[] = [];
    const recording: Database = {
      ...db,
      query: async (sql, params) => {
        statements.push(sql);
        return db.query(sql, params);
      },
      transaction: async (work, options) =>
        db.transaction(
          (tx) =>
            work({
              query: async (sql, params) => {
                statements.push(sql);
                return tx.query(sql, params);
              },
            }),
          options,
        ),
    };
    const log = await createEmbeddedEventLog({ db: recording, schema, ...fastSettings });
    statements.length = 0;
    const seen: string[] = [];
    await log.follow({
      topic,
      handler: eachMessage(async (delivered) => {
        seen.push(delivered.key);
      }),
    });
    await log.publish(topic, [message('a', 0), message('b', 1)]);
    await waitUntil(() => seen.length === 2);
    // Well past a lease renewal (leaseMs / 3), which a group member would have written by now.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(statements.filter((sql) => /consumer_offsets|group_members/.test(sql))).toEqual([]);
    expect(await groupRowsOf(db, schema, topic)).toEqual([]);
    await log.close();
  });

  /**
   * Runs `body` recording the intervals it starts and the ones cleared: those still set afterwards keep a process
   * (a Jest worker) alive after every client was closed.
   */
  const intervalsLeftBy = async (body: () => Promise<void>): Promise<number> => {
    const live = new Set<unknown>();
    const { setInterval: set, clearInterval: clear } = globalThis;
    globalThis.setInterval = (...args: Parameters<typeof set>) => {
      const timer = set(...args);
      live.add(timer);
      return timer;
    };
    globalThis.clearInterval = (timer?: Parameters<typeof clear>[0]) => {
      live.delete(timer);
      clear(timer);
    };
    try {
      await body();
    } finally {
      globalThis.setInterval = set;
      globalThis.clearInterval = clear;
    }
    for (const timer of live) clear(timer as NodeJS.Timeout);
    return live.size;
  };

  it('starts no member when the log is closed while consume() waits, and leaves no timer', async () => {
    const left = await intervalsLeftBy(async () => {
      const log = await open();
      const consuming = log.consume({
        topic: `embedded.closing${Date.now()}.v1`,
        group: 'g',
        handler: async () => {},
      });
      await log.close();
      await expect(consuming).rejects.toThrow(/closed/);
    });
    expect(left).toBe(0);
  });

  it('leaves no heartbeat when a member is closed while it joins, and releases what the join claimed', async () => {
    const topic = `embedded.joining${Date.now()}.v1`;
    let reached!: () => void;
    const atJoin = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Holds the join at its first statement on the group tables, so that close() comes in the middle of it.
    const gated: Database = {
      ...db,
      query: async (sql, params) => {
        if (/insert into \S+consumer_offsets/.test(sql)) {
          reached();
          await released;
        }
        return db.query(sql, params);
      },
    };
    const left = await intervalsLeftBy(async () => {
      const log = await createEmbeddedEventLog({ db: gated, schema, ...fastSettings });
      const consuming = log.consume({ topic, group: 'joining', handler: async () => {} });
      await atJoin;
      const closing = log.close();
      release();
      await closing;
      await consuming.catch(() => undefined);
    });
    expect(left).toBe(0);
    const { rows } = await db.query<{ owners: number }>(
      `select count(owner)::int as owners from "${schema}".consumer_offsets where topic = $1`,
      [topic],
    );
    expect(rows[0]!.owners).toBe(0);
    expect((await groupRowsOf(db, schema, topic)).filter((row) => row.startsWith('member'))).toEqual([]);
  });

  it("refuses a client that counts a topic's partitions differently", async () => {
    const [eight, four] = [await open({ partitions: 8 }), await open({ partitions: 4 })];
    await eight.publish('embedded.partitions.v1', [message('k', 0)]);

    await expect(four.publish('embedded.partitions.v1', [message('k', 1)])).rejects.toThrow(
      /has 8 partitions, but this client uses 4/,
    );
    await Promise.all([eight.close(), four.close()]);
  });

  it("numbers a partition in commit order under concurrent publishers, keeping each publisher's order", async () => {
    const topic = 'embedded.concurrent.v1';
    const publishers = await Promise.all([open(), open(), open()]);
    await Promise.all(
      publishers.map(async (publisher, p) => {
        for (let batch = 0; batch < 5; batch++) {
          await publisher.publish(
            topic,
            [0, 1, 2, 3].map((i) => message(`key-${p}`, batch * 4 + i)),
          );
        }
      }),
    );

    const seen: Array<{ key: string; seq: number; offset: bigint }> = [];
    const consumer = await open();
    await consumer.consume({
      topic,
      group: 'checker',
      handler: eachMessage(async (delivered) => {
        seen.push({
          key: delivered.key,
          seq: Number(new TextDecoder().decode(delivered.value)),
          offset: BigInt(delivered.offset),
        });
      }),
    });
    await waitUntil(() => seen.length >= 60);

    for (const p of [0, 1, 2]) {
      const ofKey = seen.filter((entry) => entry.key === `key-${p}`);
      expect(ofKey.map((entry) => entry.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    }
    const offsetsByPartition = new Map<number, bigint[]>();
    for (const entry of seen) {
      const partition = partitionOf(entry.key, 8);
      offsetsByPartition.set(partition, [...(offsetsByPartition.get(partition) ?? []), entry.offset]);
    }
    for (const offsets of offsetsByPartition.values()) {
      expect(offsets).toEqual([...offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    await Promise.all([consumer, ...publishers].map((log) => log.close()));
  });

  it('sends a NOTIFY on publish, so readers in other processes wake up without polling', async () => {
    const notes: string[] = [];
    const log = await open();
    const unlisten = await db.listen(`${schema}_wakeup`, (note) => notes.push(note));
    await log.publish('embedded.notify.v1', [message('listing-7', 0)]);
    await waitUntil(() => notes.length > 0);

    // The note, then the sending process (its own logs were woken in-process and drop it).
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      new RegExp(`^messages embedded\\.notify\\.v1 ${partitionOf('listing-7', 8)} [0-9a-f-]{36}$`),
    );
    await unlisten();
    await log.close();
  });

  it('reads a partition once per wake-up, and still delivers what is published while a message is in hand', async () => {
    const topic = 'embedded.reads.v1';
    const { counting, reads } = countingPartitionReads(db);
    // One partition, batches of 2: a backlog of 5 is read as 2 + 2 + 1 without waiting for a wake-up.
    const log = await createEmbeddedEventLog({
      db: counting,
      schema,
      ...fastSettings,
      partitions: 1,
      batchSize: 2,
    });
    const publisher = await open({ partitions: 1 });
    await publisher.publish(
      topic,
      [0, 1, 2, 3, 4].map((seq) => message('k', seq)),
    );
    const handled: number[] = [];
    let releaseFirst: () => void = () => {};
    const firstInHand = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let holding = true;
    await log.consume({
      topic,
      group: 'reader',
      handler: eachMessage(async (delivered) => {
        const seq = Number(new TextDecoder().decode(delivered.value));
        if (seq === 5 && holding) await firstInHand;
        handled.push(seq);
      }),
    });
    await waitUntil(() => handled.length === 5);
    const afterBacklog = reads();
    expect(afterBacklog).toBe(3);

    // Published while the reader holds message 5: the wake-up comes during the handler, so 6 is read next.
    await publisher.publish(topic, [message('k', 5)]);
    await waitUntil(() => reads() === afterBacklog + 1);
    await publisher.publish(topic, [message('k', 6)]);
    holding = false;
    releaseFirst();
    await waitUntil(() => handled.length === 7);
    expect(handled).toEqual([0, 1, 2, 3, 4, 5, 6]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // One read per short batch: no empty read after each message (pollIntervalMs is a minute here).
    expect(reads()).toBe(afterBacklog + 2);
    await Promise.all([log.close(), publisher.close()]);
  });

  it('reads the partitions woken together in one statement once a read is running', async () => {
    const topic = 'embedded.reads-together.v1';
    const partitions = 4;
    const { counting, reads } = countingPartitionReads(db);
    const log = await createEmbeddedEventLog({ db: counting, schema, ...fastSettings, partitions });
    const publisher = await open({ partitions });
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9'].filter(
      (key, i, all) =>
        all.findIndex((other) => partitionOf(other, partitions) === partitionOf(key, partitions)) === i,
    );
    expect(keys).toHaveLength(partitions);
    const handled: string[] = [];
    await log.consume({
      topic,
      group: 'together',
      handler: eachMessage(async (delivered) => {
        handled.push(delivered.key);
      }),
    });
    // The members' first reads (empty) are done once the wake-ups find them waiting.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = reads();

    // One publish wakes the four partitions at once: the first read runs alone, the other three go in one more.
    await publisher.publish(
      topic,
      keys.map((key) => message(key, 0)),
    );
    await waitUntil(() => handled.length === partitions);
    expect(reads() - before).toBe(2);
    expect([...handled].sort()).toEqual([...keys].sort());
    await Promise.all([log.close(), publisher.close()]);
  });

  it('commits what a member handled with its lease renewal, not batch by batch', async () => {
    const topic = 'embedded.commits.v1';
    const { counting, commits } = countingPartitionReads(db);
    // Batches of one: a backlog of 20 is 20 batches. The lease is renewed every second.
    const log = await createEmbeddedEventLog({
      db: counting,
      schema,
      ...fastSettings,
      leaseMs: 3_000,
      partitions: 1,
      batchSize: 1,
    });
    const publisher = await open({ partitions: 1 });
    await publisher.publish(
      topic,
      Array.from({ length: 20 }, (_, seq) => message('k', seq)),
    );
    const handled: string[] = [];
    const before = commits();
    await log.consume({
      topic,
      group: 'committer',
      handler: eachMessage(async (delivered) => {
        handled.push(delivered.offset);
      }),
    });
    const committed = async () =>
      (
        await db.query<{ committed_offset: string }>(
          `select committed_offset::text from ${schema}.consumer_offsets where topic = $1 and group_name = $2`,
          [topic, 'committer'],
        )
      ).rows[0]?.committed_offset;
    await waitUntil(() => handled.length === 20);
    await waitUntil(async () => (await committed()) === handled.at(-1));
    // The join's and the renewals' statements (a few), not one per batch.
    expect(commits() - before).toBeLessThanOrEqual(5);
    await Promise.all([log.close(), publisher.close()]);
  });

  it('hands a quiet partition its message at once, and gathers what a busy one receives within batchIntervalMs into one batch', async () => {
    const topic = 'embedded.interval.v1';
    const batchIntervalMs = 1_500;
    const log = await open({ partitions: 1, batchIntervalMs });
    const publisher = await open({ partitions: 1 });
    const batches: { seqs: number[]; at: number }[] = [];
    await log.consume({
      topic,
      group: 'gatherer',
      handler: async (batch) => {
        batches.push({
          seqs: batch.messages.map((delivered) => Number(new TextDecoder().decode(delivered.value))),
          at: performance.now(),
        });
      },
    });
    const publishedAt = performance.now();
    await publisher.publish(topic, [message('k', 0)]);
    await waitUntil(() => batches.length === 1);
    // The first message of a quiet partition does not wait for the interval.
    expect(batches[0]!.at - publishedAt).toBeLessThan(batchIntervalMs);

    // Three publishes one by one, right after the first batch: one batch, once the interval has passed.
    for (const seq of [1, 2, 3]) await publisher.publish(topic, [message('k', seq)]);
    await waitUntil(() => batches.flatMap((batch) => batch.seqs).length === 4);
    expect(batches.map((batch) => batch.seqs)).toEqual([[0], [1, 2, 3]]);
    expect(batches[1]!.at - batches[0]!.at).toBeGreaterThanOrEqual(batchIntervalMs - 50);
    await Promise.all([log.close(), publisher.close()]);
  });

  it("starts the short batches of a member's busy partitions together, each still batchIntervalMs after its last", async () => {
    const topic = 'embedded.rounds.v1';
    const batchIntervalMs = 1_000;
    const partitions = 4;
    const log = await open({ partitions, batchIntervalMs });
    const publisher = await open({ partitions });
    const [early, late] = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']
      .filter(
        (key, i, keys) =>
          keys.findIndex((other) => partitionOf(other, partitions) === partitionOf(key, partitions)) === i,
      )
      .slice(0, 2) as [string, string];
    const batches: { key: string; at: number }[] = [];
    await log.consume({
      topic,
      group: 'rounds',
      handler: async (batch) => {
        batches.push({ key: batch.messages[0]!.key, at: performance.now() });
      },
    });
    const startsOf = (key: string) => batches.filter((batch) => batch.key === key).map((batch) => batch.at);

    // Two quiet partitions, each handed its message at once: their batches start 300 ms apart.
    await publisher.publish(topic, [message(early, 0)]);
    await waitUntil(() => startsOf(early).length === 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await publisher.publish(topic, [message(late, 0)]);
    await waitUntil(() => startsOf(late).length === 1);
    // Both busy now: their next batches start in one round.
    await publisher.publish(topic, [message(early, 1), message(late, 1)]);
    await waitUntil(() => startsOf(early).length === 2 && startsOf(late).length === 2);

    const [early1, early2] = startsOf(early) as [number, number];
    const [late1, late2] = startsOf(late) as [number, number];
    expect(late1 - early1).toBeGreaterThanOrEqual(250);
    expect(Math.abs(late2 - early2)).toBeLessThan(100);
    expect(early2 - early1).toBeGreaterThanOrEqual(batchIntervalMs - 50);
    expect(late2 - late1).toBeGreaterThanOrEqual(batchIntervalMs - 50);
    await Promise.all([log.close(), publisher.close()]);
  });

  it("wakes on another process's NOTIFY, and once per publish of its own (its own NOTIFY is dropped)", async () => {
    const topic = 'embedded.origin.v1';
    const { counting, reads } = countingPartitionReads(db);
    const log = await createEmbeddedEventLog({ db: counting, schema, ...fastSettings, partitions: 1 });
    const handled: string[] = [];
    await log.consume({
      topic,
      group: 'reader',
      handler: eachMessage(async (delivered) => {
        handled.push(new TextDecoder().decode(delivered.value));
      }),
    });
    await waitUntil(() => reads() === 1);
    for (let seq = 0; seq < 5; seq++) {
      await log.publish(topic, [message('k', seq)]);
      await waitUntil(() => handled.length === seq + 1);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(reads()).toBe(1 + 5);

    // Another process appends a message and notifies (pollIntervalMs is a minute: only the NOTIFY wakes it).
    await db.transaction(async (tx) => {
      await tx.query(
        `insert into ${schema}.messages (topic, partition, "offset", key, headers, value)
         select $1, 0, nextval('${schema}.message_offset'), 'k', '{}'::jsonb, $2`,
        [topic, new TextEncoder().encode('from elsewhere')],
      );
      await tx.query('select pg_notify($1, $2)', [`${schema}_wakeup`, `messages ${topic} 0 another-process`]);
    });
    await waitUntil(() => handled.length === 6);
    expect(handled.at(-1)).toBe('from elsewhere');
    await log.close();
  });

  it('with soleProcess, takes over the partitions a crashed earlier run still claims, without waiting for the lease', async () => {
    const topic = 'embedded.sole-process.v1';
    const crashed = severable(db);
    const earlier = await createEmbeddedEventLog({
      db: crashed.db,
      schema,
      ...fastSettings,
      leaseMs: 60_000,
    });
    const earlierSeen = await keysConsumed(earlier, topic, 'restarting');
    await earlier.publish(topic, [message('before-crash', 0)]);
    await waitUntil(() => earlierSeen.length === 1);
    crashed.sever();

    const restarted = await open({ leaseMs: 60_000, soleProcess: true });
    const seen = await keysConsumed(restarted, topic, 'restarting');
    await restarted.publish(topic, [message('after-crash', 1)]);
    // Well under the 60 s lease it must not wait for, with room for a loaded machine.
    await waitUntil(() => seen.includes('after-crash'), 20_000);
    // What the crashed run handled since its last lease renewal comes again, before what came after.
    expect(seen.filter((key) => key !== 'before-crash')).toEqual(['after-crash']);
    expect(seen.at(-1)).toBe('after-crash');
    await restarted.close();
    // The crashed run's timers are still armed; closing it fails against the severed handle but stops them.
    await earlier.close().catch(() => undefined);
  });

  it('with soleProcess, neither listens nor notifies, and on PGlite publishes in one statement, outside any transaction', async () => {
    const topic = 'embedded.sole-process-statements.v1';
    const statements: { sql: string; inTransaction: boolean }[] = [];
    let listens = 0;
    const counting: Database = {
      ...db,
      query: async (sql, params) => {
        statements.push({ sql, inTransaction: false });
        return db.query(sql, params);
      },
      transaction: async (work, options) =>
        db.transaction(
          (tx) =>
            work({
              query: async (sql, params) => {
                statements.push({ sql, inTransaction: true });
                return tx.query(sql, params);
              },
            }),
          options,
        ),
      listen: async (channel, onNotify) => {
        listens++;
        return db.listen(channel, onNotify);
      },
    };
    const log = await createEmbeddedEventLog({ db: counting, schema, ...fastSettings, soleProcess: true });
    const seen = await keysConsumed(log, topic, 'sole');
    statements.length = 0;
    const keys = ['a', 'b', 'a', 'c', 'a', 'b'];
    await log.publish(
      topic,
      keys.map((key, seq) => message(key, seq)),
    );
    // The publish's own statements (the consumer reads meanwhile): on PostgreSQL a lock per partition it writes
    // and the insert, in one transaction; on PGlite the insert alone.
    const publishing = statements.flatMap(({ sql, inTransaction }) =>
      sql.includes('pg_advisory_xact_lock')
        ? [{ lock: true, inTransaction }]
        : sql.includes('message_offset')
          ? [{ lock: false, inTransaction }]
          : [],
    );
    // Woken in process: pollIntervalMs is a minute.
    await waitUntil(() => seen.length === keys.length);

    expect(listens).toBe(0);
    expect(statements.filter(({ sql }) => sql.includes('pg_notify'))).toEqual([]);
    const partitionsTouched = new Set(keys.map((key) => partitionOf(key, 8))).size;
    expect(publishing).toEqual(
      db.engine === 'postgres'
        ? [
            ...Array.from({ length: partitionsTouched }, () => ({ lock: true, inTransaction: true })),
            { lock: false, inTransaction: true },
          ]
        : [{ lock: false, inTransaction: false }],
    );
    // Each key's messages are numbered in the order they were published.
    const { rows } = await db.query<{ key: string; seq: string }>(
      `select key, convert_from(value, 'UTF8') as seq from "${schema}".messages where topic = $1 order by "offset"`,
      [topic],
    );
    for (const key of new Set(keys)) {
      expect(rows.filter((row) => row.key === key).map((row) => Number(row.seq))).toEqual(
        keys.flatMap((candidate, seq) => (candidate === key ? [seq] : [])),
      );
    }
    await log.close();
  });
});
