import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, StorageType, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { EventLog } from '../src/eventlog.port.js';
import {
  createNatsEventLog,
  durableNameOf,
  streamNameOf,
  type NatsEventLogOptions,
} from '../src/nats.event-log.js';
import { describeEventLogContract } from '../src/testing/index.js';
import { topicRecorder } from './topic-recorder.js';

const servers = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const fastRetries: Partial<NatsEventLogOptions> = { retry: { initialDelayMs: 20, maxDelayMs: 200 } };

const { topics: topicsUsed, record: recordingTopics } = topicRecorder();

let admin: NatsConnection;
let jsm: JetStreamManager;
beforeAll(async () => {
  admin = await connect({ servers });
  jsm = await jetstreamManager(admin);
});
afterAll(async () => {
  await Promise.all(
    [...topicsUsed].map((topic) => jsm.streams.delete(streamNameOf(topic)).catch(() => false)),
  );
  await admin.close();
});

const connectionOf = new Map<EventLog, NatsConnection>();
describeEventLogContract('NATS JetStream', {
  open: async () => {
    // Its own connection per client, so that the crash test can cut one off.
    const connection = await connect({ servers });
    const log = await createNatsEventLog({ connection, ackWaitMs: 1_000, ...fastRetries });
    const client = recordingTopics({
      publish: log.publish,
      subscribe: log.subscribe,
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
  batchesOfOne: true,
});

describe('NATS JetStream event log', () => {
  const open = async (options: Partial<NatsEventLogOptions> = {}) =>
    recordingTopics(await createNatsEventLog({ servers, ...fastRetries, ...options }));
  const topic = () => `natstest.t${randomUUID().slice(0, 8)}.v1`;

  it('keeps a topic in one file-backed stream with a subject per partition and a consumer per group partition', async () => {
    const log = await open({ partitions: 4 });
    const name = topic();
    await log.subscribe({ topic: name, group: 'projector', handler: async () => {} });

    const stream = await jsm.streams.info(streamNameOf(name));
    expect(stream.config.subjects).toEqual([`${name}.*`]);
    expect(stream.config.storage).toBe(StorageType.File);
    const consumers = await Promise.all(
      [0, 1, 2, 3].map((partition) =>
        jsm.consumers.info(stream.config.name, durableNameOf('projector', partition)),
      ),
    );
    expect(consumers.map((consumer) => consumer.config.filter_subject)).toEqual(
      [0, 1, 2, 3].map((partition) => `${name}.${partition}`),
    );
    expect(consumers.every((consumer) => consumer.config.max_ack_pending === 1)).toBe(true);
    expect(consumers.every((consumer) => consumer.config.ack_policy === AckPolicy.Explicit)).toBe(true);
    await log.close();
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
