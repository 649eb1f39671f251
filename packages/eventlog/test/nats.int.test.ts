import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, StorageType, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { Database } from '@marketplace/database';
import {
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  dropSchema,
  freshSchemaName,
  testEngines,
} from '@marketplace/database/testing';
import type { EventLog } from '../src/eventlog.port.js';
import {
  createNatsEventLog,
  durableNameOf,
  streamNameOf,
  type NatsEventLogOptions,
} from '../src/nats.event-log.js';
import { describeEventLogContract } from '../src/testing/index.js';
import { groupRowsOf } from './group-rows.js';
import { topicRecorder } from './topic-recorder.js';

const servers = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const fastRetries: Partial<NatsEventLogOptions> = { retry: { initialDelayMs: 20, maxDelayMs: 200 } };

const { topics: topicsUsed, record: recordingTopics } = topicRecorder();

let admin: NatsConnection;
let jsm: JetStreamManager;
/** The consumers' database: their groups' offsets and partition leases, in a schema of this file. */
let db: Database;
const schema = freshSchemaName('natslog');
beforeAll(async () => {
  admin = await connect({ servers });
  jsm = await jetstreamManager(admin);
  db = await testEngines()[0]!.create();
}, TEST_ENGINE_CREATE_TIMEOUT_MS);
afterAll(async () => {
  await Promise.all(
    [...topicsUsed].map((topic) => jsm.streams.delete(streamNameOf(topic)).catch(() => false)),
  );
  await admin.close();
  await dropSchema(db, schema);
  await db.close();
});

const connectionOf = new Map<EventLog, NatsConnection>();
describeEventLogContract('NATS JetStream', {
  open: async () => {
    // Its own connection per client, so that the crash test can cut one off.
    const connection = await connect({ servers });
    const log = await createNatsEventLog({ connection, db, schema, leaseMs: 1_000, ...fastRetries });
    const client = recordingTopics({
      publish: log.publish,
      consume: log.consume,
      follow: log.follow,
      deleteGroup: log.deleteGroup,
      close: async () => {
        await log.close();
        await connection.close();
      },
    });
    connectionOf.set(client, connection);
    return client;
  },
  crash: async (client) => {
    await connectionOf.get(client)!.close();
  },
  crashDetectionMs: 3_000,
  // The groups' rows, and the stream's consumers: an ordered consumer by its name less the serial that it
  // changes when it starts over (`<prefix>_<n>`).
  consumerStateOf: async (topic) => {
    const consumers: string[] = [];
    for await (const info of jsm.consumers.list(streamNameOf(topic))) {
      consumers.push(`consumer ${info.name.replace(/_\d+$/, '')}`);
    }
    return [...(await groupRowsOf(db, schema, topic)), ...consumers.sort()];
  },
});

describe('NATS JetStream event log', () => {
  const open = async (options: Partial<NatsEventLogOptions> = {}) =>
    recordingTopics(await createNatsEventLog({ servers, db, schema, ...fastRetries, ...options }));
  const topic = () => `natstest.t${randomUUID().slice(0, 8)}.v1`;

  it("keeps a topic in one file-backed stream with a subject per partition, and a group's offsets in the database", async () => {
    const log = await open({ partitions: 4 });
    const name = topic();
    await log.consume({ topic: name, group: 'projector', handler: async () => {} });

    const stream = await jsm.streams.info(streamNameOf(name));
    expect(stream.config.subjects).toEqual([`${name}.*`]);
    expect(stream.config.storage).toBe(StorageType.File);
    const { rows } = await db.query<{ partition: number; committed_offset: string }>(
      `select partition, committed_offset::text from ${schema}.consumer_offsets
       where topic = $1 and group_name = 'projector' order by partition`,
      [name],
    );
    expect(rows).toEqual([0, 1, 2, 3].map((partition) => ({ partition, committed_offset: '0' })));
    await log.close();
  });

  it('starts a group that had durable consumers after what they acknowledged', async () => {
    const name = topic();
    const publisher = await open({ partitions: 1 });
    const messages = Array.from({ length: 5 }, (_, i) => ({
      key: 'k',
      value: new TextEncoder().encode(String(i)),
      headers: { ce_id: randomUUID() },
    }));
    await publisher.publish(name, messages);
    // The group's position as the durable consumer of an earlier version held it: the first three acknowledged.
    await jsm.consumers.add(streamNameOf(name), {
      durable_name: durableNameOf('legacy', 0),
      filter_subject: `${name}.0`,
      ack_policy: AckPolicy.All,
    });
    const legacy = await jsm.jetstream().consumers.get(streamNameOf(name), durableNameOf('legacy', 0));
    const third = (await legacy.fetch({ max_messages: 3, expires: 2_000 })) as AsyncIterable<{
      seq: number;
      ackAck(): Promise<boolean>;
    }>;
    let last: { ackAck(): Promise<boolean> } | undefined;
    for await (const message of third) last = message;
    await last!.ackAck();

    const seen: string[] = [];
    await publisher.consume({
      topic: name,
      group: 'legacy',
      handler: async (batch) => {
        seen.push(...batch.messages.map((message) => new TextDecoder().decode(message.value)));
      },
    });
    const deadline = Date.now() + 10_000;
    while (seen.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual(['3', '4']);
    await publisher.close();
  });

  it('closes a member right after it joined, while its partitions’ readers are still starting', async () => {
    const name = topic();
    const log = await open({ partitions: 4 });
    for (let round = 0; round < 3; round++) {
      const consumer = await log.consume({ topic: name, group: `closing-${round}`, handler: async () => {} });
      const started = performance.now();
      // A reader stopped before its ordered consumer was set up kept pulling, and close() never resolved.
      await consumer.close();
      expect(performance.now() - started).toBeLessThan(5_000);
    }
    await log.close();
  }, 30_000);

  it("deletes a group's rows and the durable consumers it had, and leaves other groups' alone", async () => {
    const name = topic();
    const log = await open({ partitions: 2 });
    await log.publish(name, [{ key: 'k', value: new Uint8Array([1]), headers: { ce_id: randomUUID() } }]);
    // Each group's offsets in the database, and the durable consumers of an earlier version beside them.
    for (const group of ['rebuilt', 'kept']) {
      await (await log.consume({ topic: name, group, handler: async () => {} })).close();
      for (const partition of [0, 1]) {
        await jsm.consumers.add(streamNameOf(name), {
          durable_name: durableNameOf(group, partition),
          filter_subject: `${name}.${partition}`,
          ack_policy: AckPolicy.All,
        });
      }
    }
    const durables = async (): Promise<string[]> => {
      const names: string[] = [];
      for await (const info of jsm.consumers.list(streamNameOf(name))) names.push(info.name);
      return names.sort();
    };
    expect(await durables()).toEqual(['kept-p0', 'kept-p1', 'rebuilt-p0', 'rebuilt-p1']);

    await log.deleteGroup(name, 'rebuilt');

    expect(await durables()).toEqual(['kept-p0', 'kept-p1']);
    expect(await groupRowsOf(db, schema, name)).toEqual(['offsets kept 0', 'offsets kept 1']);
    await log.deleteGroup(name, 'rebuilt');
    await log.close();
  });

  it('publishes a batch pipelined, in order per key, even while another client publishes to the topic', async () => {
    const name = topic();
    const [first, second] = [await open({ partitions: 2 }), await open({ partitions: 2 })];
    const batchOf = (key: string) =>
      Array.from({ length: 200 }, (_, i) => ({
        key,
        value: new TextEncoder().encode(String(i)),
        headers: { ce_id: `${key}/${i}` },
      }));
    await Promise.all([first.publish(name, batchOf('a')), second.publish(name, batchOf('b'))]);

    const seen = new Map<string, number[]>();
    await first.consume({
      topic: name,
      group: 'reader',
      handler: async (batch) => {
        for (const message of batch.messages) {
          seen.set(message.key, [
            ...(seen.get(message.key) ?? []),
            Number(new TextDecoder().decode(message.value)),
          ]);
        }
      },
    });
    const deadline = Date.now() + 10_000;
    const count = () => [...seen.values()].reduce((sum, list) => sum + list.length, 0);
    while (count() < 400 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const inOrder = Array.from({ length: 200 }, (_, i) => i);
    expect(seen.get('a')).toEqual(inOrder);
    expect(seen.get('b')).toEqual(inOrder);
    await Promise.all([first.close(), second.close()]);
  });

  it('drops a re-published message with the same ce_id (Nats-Msg-Id)', async () => {
    const log = await open();
    const name = topic();
    const message = { key: 'listing-1', value: new Uint8Array([1, 2, 3]), headers: { ce_id: randomUUID() } };
    await log.publish(name, [message]);
    await log.publish(name, [message]);

    const stream = await jsm.streams.info(streamNameOf(name));
    expect(stream.state.messages).toBe(1);
    await log.close();
  });

  it('refuses a topic whose stream was created with another partition count', async () => {
    const name = topic();
    const eight = await open({ partitions: 8 });
    const four = await open({ partitions: 4 });
    const message = { key: 'k', value: new Uint8Array(), headers: {} };
    await eight.publish(name, [message]);

    await expect(four.publish(name, [message])).rejects.toThrow(/partitions=8.*4 partitions/);
    await Promise.all([eight.close(), four.close()]);
  });

  it('refuses headers that NATS reserves for itself or for the key', async () => {
    const log = await open();
    const publish = (headers: Record<string, string>) =>
      log.publish(topic(), [{ key: 'k', value: new Uint8Array(), headers }]);

    await expect(publish({ 'Nats-Msg-Id': 'x' })).rejects.toThrow(/reserved/);
    await expect(publish({ 'eventlog-key': 'x' })).rejects.toThrow(/reserved/);
    await log.close();
  });
});
