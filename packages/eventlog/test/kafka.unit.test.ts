import { describe, expect, it } from '@jest/globals';
import type {
  Admin,
  Consumer,
  ConsumerConfig,
  ConsumerRunConfig,
  ConsumerSubscribeTopics,
  EachBatchPayload,
  Producer,
  ProducerConfig,
  ProducerRecord,
  SeekEntry,
  TopicPartitionOffsetAndMetadata,
} from 'kafkajs';
import type { DeliveredBatch, DeliveredMessage, EventLog } from '../src/eventlog.port.js';
import { createKafkaEventLog, decodeHeaders, type KafkaClient } from '../src/kafka.event-log.js';

/**
 * A double of the kafkajs objects the adapter uses. It records what the adapter asks of kafkajs; the test then
 * plays the broker's part by calling the `eachBatch` the adapter registered. This checks our use of the
 * client API only: the contract suite against a real broker (kafka.int.test.ts) checks the behaviour.
 */
class KafkaDouble implements KafkaClient {
  readonly producerConfigs: ProducerConfig[] = [];
  readonly sent: ProducerRecord[] = [];
  readonly createdTopics: unknown[] = [];
  readonly consumerConfigs: ConsumerConfig[] = [];
  readonly subscriptions: ConsumerSubscribeTopics[] = [];
  readonly runConfigs: ConsumerRunConfig[] = [];
  readonly commits: TopicPartitionOffsetAndMetadata[][] = [];
  readonly offsetsSet: Array<{ groupId: string; topic: string; partitions: SeekEntry[] }> = [];
  readonly disconnected: string[] = [];
  /** Offsets the adapter marked as processed through `resolveOffset`. */
  readonly resolved: string[] = [];
  /** Committed offsets per group, as `fetchOffsets` reports them ('-1': none). */
  readonly groupOffsets = new Map<string, string>();
  send: (record: ProducerRecord) => Promise<void> = async (record) => {
    this.sent.push(record);
  };

  producer(config?: ProducerConfig): Producer {
    this.producerConfigs.push(config ?? {});
    return {
      connect: async () => {},
      send: async (record: ProducerRecord) => {
        await this.send(record);
        return [];
      },
      disconnect: async () => {
        this.disconnected.push('producer');
      },
    } as unknown as Producer;
  }

  admin(): Admin {
    return {
      connect: async () => {},
      createTopics: async (request: unknown) => {
        this.createdTopics.push(request);
        return true;
      },
      fetchOffsets: async ({ groupId, topics }: { groupId: string; topics: string[] }) =>
        topics.map((topic) => ({
          topic,
          partitions: [0, 1].map((partition) => ({
            partition,
            offset: this.groupOffsets.get(groupId) ?? '-1',
          })),
        })),
      fetchTopicOffsets: async () => [
        { partition: 0, offset: '7', high: '7', low: '0' },
        { partition: 1, offset: '3', high: '3', low: '0' },
      ],
      setOffsets: async (request: { groupId: string; topic: string; partitions: SeekEntry[] }) => {
        this.offsetsSet.push(request);
      },
      disconnect: async () => {
        this.disconnected.push('admin');
      },
    } as unknown as Admin;
  }

  consumer(config: ConsumerConfig): Consumer {
    this.consumerConfigs.push(config);
    return {
      events: { CRASH: 'consumer.crash' },
      on: () => () => {},
      connect: async () => {},
      subscribe: async (subscription: ConsumerSubscribeTopics) => {
        this.subscriptions.push(subscription);
      },
      run: async (runConfig: ConsumerRunConfig) => {
        this.runConfigs.push(runConfig);
      },
      commitOffsets: async (offsets: TopicPartitionOffsetAndMetadata[]) => {
        this.commits.push(offsets);
      },
      disconnect: async () => {
        this.disconnected.push(`consumer ${config.groupId}`);
      },
    } as unknown as Consumer;
  }

  /**
   * Plays the broker: hands one fetched batch of messages at `offsets` to the eachBatch of consumer number
   * `index`; `stale` says a rebalance took the partition away meanwhile.
   */
  deliver(index: number, offsets: string | readonly string[], partition = 1, stale = false): Promise<void> {
    const messages = [offsets].flat().map((offset) => ({
      key: Buffer.from('listing-1'),
      value: Buffer.from([0, 1, 255]),
      offset,
      timestamp: '0',
      attributes: 0,
      headers: { ce_id: Buffer.from(`evt-${offset}`), traceparent: ['00-old', Buffer.from('00-new')] },
    }));
    const payload = {
      batch: { topic: 'marketplace.listing.v1', partition, messages },
      resolveOffset: (offset: string) => this.resolved.push(offset),
      heartbeat: async () => {},
      isRunning: () => true,
      isStale: () => stale,
    } as unknown as EachBatchPayload;
    return this.runConfigs[index]!.eachBatch!(payload);
  }
}

const fastRetry = { initialDelayMs: 1, maxDelayMs: 5 };
const open = (kafka: KafkaDouble, options: { publishTimeoutMs?: number } = {}): Promise<EventLog> =>
  createKafkaEventLog({ kafka, partitions: 6, retry: fastRetry, ...options });

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
};

describe('Kafka event log (kafkajs test double)', () => {
  it('produces through an idempotent producer with acks -1, after creating the topic once', async () => {
    const kafka = new KafkaDouble();
    const log = await open(kafka);
    const message = { key: 'listing-1', value: new Uint8Array([1, 2, 3]), headers: { ce_id: 'evt-1' } };
    await log.publish('marketplace.listing.v1', [message]);
    await log.publish('marketplace.listing.v1', [message, { ...message, headers: {} }]);

    expect(kafka.producerConfigs).toEqual([
      expect.objectContaining({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false }),
    ]);
    expect(kafka.createdTopics).toEqual([
      expect.objectContaining({
        topics: [{ topic: 'marketplace.listing.v1', numPartitions: 6, replicationFactor: -1 }],
        waitForLeaders: true,
      }),
    ]);
    expect(kafka.sent).toHaveLength(2);
    expect(kafka.sent[1]).toEqual(
      expect.objectContaining({
        topic: 'marketplace.listing.v1',
        acks: -1,
        messages: [
          { key: 'listing-1', value: Buffer.from([1, 2, 3]), headers: { ce_id: 'evt-1' } },
          { key: 'listing-1', value: Buffer.from([1, 2, 3]), headers: {} },
        ],
      }),
    );
    await log.close();
    expect(kafka.disconnected).toEqual(['producer', 'admin']);
  });

  it('rejects a publish the broker does not acknowledge in time', async () => {
    const kafka = new KafkaDouble();
    kafka.send = () => new Promise(() => {});
    const log = await open(kafka, { publishTimeoutMs: 50 });

    await expect(
      log.publish('marketplace.listing.v1', [{ key: 'k', value: new Uint8Array(), headers: {} }]),
    ).rejects.toThrow(/did not finish within 50 ms/);
  });

  it('rejects invalid messages before producing anything', async () => {
    const kafka = new KafkaDouble();
    const log = await open(kafka);

    await expect(
      log.publish('marketplace.listing.v1', [
        { key: 'k', value: 'text' as unknown as Uint8Array, headers: {} },
      ]),
    ).rejects.toThrow(/value must be a Uint8Array/);
    expect(kafka.sent).toEqual([]);
  });

  it('joins the group with automatic commits off, from the beginning by default', async () => {
    const kafka = new KafkaDouble();
    const log = await open(kafka);
    await log.consume({ topic: 'marketplace.listing.v1', group: 'catalog', handler: async () => {} });

    expect(kafka.consumerConfigs).toEqual([expect.objectContaining({ groupId: 'catalog' })]);
    expect(kafka.subscriptions).toEqual([{ topics: ['marketplace.listing.v1'], fromBeginning: true }]);
    expect(kafka.runConfigs).toEqual([
      expect.objectContaining({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 6,
      }),
    ]);
    expect(kafka.offsetsSet).toEqual([]);
  });

  it("starts a new group from 'latest' at the current end of the topic, and leaves an existing group alone", async () => {
    const kafka = new KafkaDouble();
    kafka.groupOffsets.set('existing', '12');
    const log = await open(kafka);
    await log.consume({
      topic: 'marketplace.listing.v1',
      group: 'fresh',
      from: 'latest',
      handler: async () => {},
    });
    await log.consume({
      topic: 'marketplace.listing.v1',
      group: 'existing',
      from: 'latest',
      handler: async () => {},
    });

    expect(kafka.offsetsSet).toEqual([
      {
        groupId: 'fresh',
        topic: 'marketplace.listing.v1',
        partitions: [
          { partition: 0, offset: '7' },
          { partition: 1, offset: '3' },
        ],
      },
    ]);
    expect(kafka.subscriptions.map((subscription) => subscription.fromBeginning)).toEqual([false, false]);
  });

  it('hands the handler the message and commits the next offset only once the handler resolved', async () => {
    const kafka = new KafkaDouble();
    const log = await open(kafka);
    const received: DeliveredMessage[] = [];
    const handling = deferred();
    await log.consume({
      topic: 'marketplace.listing.v1',
      group: 'catalog',
      handler: async (batch) => {
        received.push(...batch.messages);
        await handling.promise;
      },
    });

    const delivered = kafka.deliver(0, '41');
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toHaveLength(1);
    expect(kafka.commits).toEqual([]);
    handling.resolve();
    await delivered;

    expect(kafka.commits).toEqual([[{ topic: 'marketplace.listing.v1', partition: 1, offset: '42' }]]);
    expect(received[0]).toEqual({
      topic: 'marketplace.listing.v1',
      partition: 1,
      offset: '41',
      key: 'listing-1',
      value: new Uint8Array([0, 1, 255]),
      headers: { ce_id: 'evt-41', traceparent: '00-new' },
    });
  });

  it('splits a fetched batch into batches of maxBatch, committing once after each', async () => {
    const kafka = new KafkaDouble();
    const log = await open(kafka);
    const handled: Array<{ offsets: string[]; commitsBefore: number }> = [];
    await log.consume({
      topic: 'marketplace.listing.v1',
      group: 'catalog',
      maxBatch: 2,
      handler: async (batch: DeliveredBatch) => {
        handled.push({
          offsets: batch.messages.map((message) => message.offset),
          commitsBefore: kafka.commits.length,
        });
      },
    });

    await kafka.deliver(0, ['10', '11', '12', '13', '14']);

    expect(handled).toEqual([
      { offsets: ['10', '11'], commitsBefore: 0 },
      { offsets: ['12', '13'], commitsBefore: 1 },
      { offsets: ['14'], commitsBefore: 2 },
    ]);
    expect(kafka.resolved).toEqual(['11', '13', '14']);
    expect(kafka.commits.map(([commit]) => commit!.offset)).toEqual(['12', '14', '15']);
  });

  it('hands nothing over, and commits nothing, from a batch a rebalance made stale', async () => {
    const kafka = new KafkaDouble();
    const log = await open(kafka);
    let calls = 0;
    await log.consume({
      topic: 'marketplace.listing.v1',
      group: 'catalog',
      handler: async () => {
        calls++;
      },
    });

    await kafka.deliver(0, ['20', '21'], 1, true);

    expect(calls).toBe(0);
    expect(kafka.commits).toEqual([]);
  });

  it('retries a failing handler in place and commits only after it succeeded', async () => {
    const kafka = new KafkaDouble();
    const log = await open(kafka);
    let calls = 0;
    const commitsSeenByHandler: number[] = [];
    await log.consume({
      topic: 'marketplace.listing.v1',
      group: 'catalog',
      handler: async () => {
        commitsSeenByHandler.push(kafka.commits.length);
        if (++calls < 3) throw new Error('projection unavailable');
      },
    });

    await kafka.deliver(0, '9');

    expect(commitsSeenByHandler).toEqual([0, 0, 0]);
    expect(kafka.commits).toEqual([[{ topic: 'marketplace.listing.v1', partition: 1, offset: '10' }]]);
  });

  it('does not commit a message whose handler still fails when the consumer closes', async () => {
    const kafka = new KafkaDouble();
    const log = await open(kafka);
    let calls = 0;
    const consumer = await log.consume({
      topic: 'marketplace.listing.v1',
      group: 'catalog',
      handler: async () => {
        calls++;
        throw new Error('always failing');
      },
    });

    const delivered = kafka.deliver(0, '5');
    while (calls === 0) await new Promise((resolve) => setImmediate(resolve));
    await consumer.close();
    await delivered;
    await kafka.deliver(0, '6');

    expect(kafka.commits).toEqual([]);
    expect(calls).toBeGreaterThan(0);
    expect(kafka.disconnected).toEqual(['consumer catalog']);
  });
});

describe('decodeHeaders', () => {
  it('turns Kafka header bytes into text, the last of repeated values winning', () => {
    expect(decodeHeaders({ a: Buffer.from('x'), b: 'y', c: [Buffer.from('1'), '2'], d: undefined })).toEqual({
      a: 'x',
      b: 'y',
      c: '2',
    });
    expect(decodeHeaders(undefined)).toEqual({});
  });
});
