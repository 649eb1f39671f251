import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  eachMessage,
  type DeliveredMessage,
  type EventLog,
  type LogMessage,
  type ConsumeOptions,
} from '../eventlog.port.js';

/** What the contract suite needs from an adapter's test file. */
export interface EventLogContractTarget {
  /** Opens a new client of the log under test; each one stands for a separate process. The suite closes it. */
  open(): Promise<EventLog>;
  /**
   * Cuts a client off the way a crash would (nothing acknowledged, nothing released), so the log must hand
   * what that client had in hand to another member. A target that cannot crash a client inside the test
   * process leaves this out, and the crash test with it; handler failures are tested for every target.
   */
  crash?(log: EventLog): Promise<void>;
  /** How long the log may take to notice a crashed member (ack wait, lease expiry) and redeliver. */
  readonly crashDetectionMs?: number;
  /** Bound on any wait for deliveries in this suite. */
  readonly deliveryTimeoutMs?: number;
  /** The adapter hands messages over one per batch (it cannot give a partition a single owner otherwise). */
  readonly batchesOfOne?: boolean;
  /**
   * What the log keeps about the consumers of a topic, one name per thing (a group's rows, a broker-side
   * consumer or group), so the suite can check that a closed follower left nothing behind. A target that cannot
   * look leaves this out, and that check with it.
   */
  consumerStateOf?(topic: string): Promise<readonly string[]>;
}

interface Delivery {
  readonly member: number;
  readonly key: string;
  readonly seq: number;
  readonly message: DeliveredMessage;
}

/** A batch as one member's handler saw it, and whether the handler resolved. */
interface BatchSeen {
  readonly member: number;
  readonly partition: number;
  readonly seqs: readonly number[];
  readonly offsets: readonly bigint[];
  handled: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const testMessage = (key: string, seq: number): LogMessage => ({
  key,
  value: encoder.encode(JSON.stringify({ key, seq })),
  headers: { ce_id: `${key}/${seq}`, ce_type: 'contract.test', ce_source: 'eventlog-contract' },
});

const seqOf = (message: DeliveredMessage): number =>
  (JSON.parse(decoder.decode(message.value)) as { seq: number }).seq;

/** Round-robin over keys: key0/0, key1/0, …, key0/1, key1/1, … */
const interleaved = (keys: readonly string[], perKey: number, firstSeq = 0): LogMessage[] =>
  Array.from({ length: perKey }, (_, i) => keys.map((key) => testMessage(key, firstSeq + i))).flat();

const keysNamed = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

/**
 * The EventLog contract: every adapter's integration test calls this with a target, so all adapters are held
 * to the same behaviour (see the port's documentation). Topics and groups are unique per test.
 */
export const describeEventLogContract = (name: string, target: EventLogContractTarget): void => {
  const deliveryTimeoutMs = target.deliveryTimeoutMs ?? 15_000;
  const crashDetectionMs = target.crashDetectionMs ?? 10_000;

  // Jest's default of 5 s is shorter than the suite's own bounded waits, whose errors say more.
  const test = (title: string, body: () => Promise<void>, timeoutMs = 2 * deliveryTimeoutMs): void =>
    it(title, body, timeoutMs);

  describe(`EventLog contract: ${name}`, () => {
    const clients: EventLog[] = [];
    const releaseHandlers: Array<() => void> = [];

    const open = async (): Promise<EventLog> => {
      const client = await target.open();
      clients.push(client);
      return client;
    };

    afterEach(async () => {
      releaseHandlers.splice(0).forEach((release) => release());
      await Promise.all(clients.splice(0).map((client) => client.close()));
    }, deliveryTimeoutMs);

    const uniqueTopic = (): string => `contract.t${randomUUID().slice(0, 8)}.v1`;
    const uniqueGroup = (label: string): string => `${label}-${randomUUID().slice(0, 8)}`;

    const deliveries: Delivery[] = [];
    const batches: BatchSeen[] = [];
    afterEach(() => {
      deliveries.length = 0;
      batches.length = 0;
    });

    /**
     * Starts `client` consuming as member number `member`, recording every batch and every delivery in it, calling
     * `then` after each delivery (a rejection fails the batch).
     */
    const member = (
      client: EventLog,
      member: number,
      options: Omit<ConsumeOptions, 'handler'>,
      then: (delivery: Delivery) => Promise<void> = async () => {},
    ) =>
      client.consume({
        ...options,
        handler: async (batch) => {
          const seen: BatchSeen = {
            member,
            partition: batch.partition,
            seqs: batch.messages.map(seqOf),
            offsets: batch.messages.map((message) => BigInt(message.offset)),
            handled: false,
          };
          batches.push(seen);
          await eachMessage(async (message) => {
            const delivery = { member, key: message.key, seq: seqOf(message), message };
            deliveries.push(delivery);
            await then(delivery);
          })(batch);
          seen.handled = true;
        },
      });

    const waitFor = async (
      what: string,
      done: () => boolean,
      timeoutMs = deliveryTimeoutMs,
    ): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(20);
      }
    };

    const uniqueIds = (list: readonly Delivery[]): Set<string> =>
      new Set(list.map((delivery) => delivery.message.headers['ce_id'] ?? ''));

    const waitForAll = (messages: readonly LogMessage[], of: () => readonly Delivery[] = () => deliveries) =>
      waitFor(`${messages.length} messages`, () => {
        const seen = uniqueIds(of());
        return messages.every((message) => seen.has(message.headers['ce_id'] ?? ''));
      });

    const seqsByKey = (list: readonly Delivery[]): Map<string, number[]> => {
      const byKey = new Map<string, number[]>();
      for (const { key, seq } of list) byKey.set(key, [...(byKey.get(key) ?? []), seq]);
      return byKey;
    };

    test('publish resolves after a durable append: a fresh client sees the messages, headers and bytes intact', async () => {
      const topic = uniqueTopic();
      const everyByte = Uint8Array.from({ length: 256 }, (_, i) => i);
      const published: LogMessage[] = [
        {
          key: 'order-1',
          value: everyByte,
          headers: {
            ce_id: 'evt-1',
            ce_type: 'marketplace.order.placed.v1',
            ce_source: '//marketplace/order',
            ce_time: '2025-01-02T03:04:05.678Z',
            ce_subject: 'order-1',
            traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
            'x-note': 'ünïcödé – ok',
          },
        },
        { key: 'order-1', value: new Uint8Array(0), headers: { ce_id: 'evt-2' } },
        { key: 'listing-ä', value: encoder.encode('{"a":1}'), headers: {} },
      ];
      const publisher = await open();
      await publisher.publish(topic, published);
      await publisher.close();

      const received: DeliveredMessage[] = [];
      const consumer = await open();
      await consumer.consume({
        topic,
        group: uniqueGroup('fresh'),
        handler: async (batch) => {
          received.push(...batch.messages);
        },
      });
      await waitFor('3 messages', () => received.length >= 3);

      const byKey = (key: string) => received.filter((message) => message.key === key);
      expect(byKey('order-1').map((message) => message.headers)).toEqual([
        published[0]!.headers,
        { ce_id: 'evt-2' },
      ]);
      expect(byKey('order-1').map((message) => Array.from(message.value))).toEqual([
        Array.from(everyByte),
        [],
      ]);
      expect(byKey('listing-ä').map((message) => [message.headers, decoder.decode(message.value)])).toEqual([
        [{}, '{"a":1}'],
      ]);
      expect(received.every((message) => message.topic === topic)).toBe(true);
      const [first, second] = byKey('order-1');
      expect(first!.partition).toBe(second!.partition);
      expect(BigInt(first!.offset)).toBeLessThan(BigInt(second!.offset));
    });

    test('delivers the messages of each key in publish order, across several members, each once', async () => {
      const topic = uniqueTopic();
      const group = uniqueGroup('ordered');
      const keys = keysNamed('aggregate', 24);
      const perKey = 20;
      const [a, b] = [await open(), await open()];
      // A little asynchrony in the handler lets deliveries of different partitions overlap.
      const work = () => sleep(Math.random() < 0.2 ? 2 : 0);
      await member(a, 0, { topic, group }, work);
      await member(b, 1, { topic, group }, work);

      const publisher = await open();
      const messages = interleaved(keys, perKey);
      for (let i = 0; i < messages.length; i += 40) await publisher.publish(topic, messages.slice(i, i + 40));
      await waitForAll(messages);

      expect(deliveries).toHaveLength(messages.length);
      const expected = Array.from({ length: perKey }, (_, i) => i);
      for (const key of keys) expect(seqsByKey(deliveries).get(key)).toEqual(expected);
    });

    test('members of one group share the work: both handle some, together all, none twice', async () => {
      const topic = uniqueTopic();
      const group = uniqueGroup('shared');
      const [a, b, publisher] = [await open(), await open(), await open()];
      await member(a, 0, { topic, group }, () => sleep(1));
      await member(b, 1, { topic, group }, () => sleep(1));

      // Keep publishing until both members took part (groups may need a moment to rebalance), within a bound.
      const published: LogMessage[] = [];
      const bothWorked = () => new Set(deliveries.map((delivery) => delivery.member)).size === 2;
      for (let round = 0; !bothWorked(); round++) {
        if (round * 100 > deliveryTimeoutMs) throw new Error('only one member ever handled messages');
        const batch = keysNamed(`r${round}`, 16).map((key) => testMessage(key, 0));
        await publisher.publish(topic, batch);
        published.push(...batch);
        await sleep(100);
      }
      await waitForAll(published);

      expect(uniqueIds(deliveries).size).toBe(published.length);
      expect(deliveries).toHaveLength(published.length);
    });

    test('every group sees every message', async () => {
      const topic = uniqueTopic();
      const [a, b, publisher] = [await open(), await open(), await open()];
      await member(a, 0, { topic, group: uniqueGroup('first') });
      await member(b, 1, { topic, group: uniqueGroup('second') });

      const messages = interleaved(keysNamed('k', 10), 5);
      await publisher.publish(topic, messages);
      await waitForAll(messages, () => deliveries.filter((delivery) => delivery.member === 0));
      await waitForAll(messages, () => deliveries.filter((delivery) => delivery.member === 1));
    });

    test('a new group replays from the beginning; a returning group resumes after its committed position', async () => {
      const topic = uniqueTopic();
      const returning = uniqueGroup('returning');
      const [client, publisher] = [await open(), await open()];
      // One key, so one partition: messages arriving in order prove nothing older is still coming.
      const history = Array.from({ length: 30 }, (_, seq) => testMessage('only-key', seq));
      await publisher.publish(topic, history);

      const first = await member(client, 0, { topic, group: returning });
      await waitForAll(history);
      await first.close();

      const later = Array.from({ length: 10 }, (_, i) => testMessage('only-key', 30 + i));
      await publisher.publish(topic, later);
      await member(client, 1, { topic, group: uniqueGroup('newcomer') });
      await member(client, 2, { topic, group: returning });

      const of = (index: number) => () => deliveries.filter((delivery) => delivery.member === index);
      await waitForAll([...history, ...later], of(1));
      await waitForAll(later, of(2));
      expect(of(1)().map((delivery) => delivery.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect(of(2)().map((delivery) => delivery.seq)).toEqual(Array.from({ length: 10 }, (_, i) => 30 + i));
    });

    test('deleteGroup forgets a group no one consumes: nothing of it is kept, and it starts afresh; twice is no error', async () => {
      const topic = uniqueTopic();
      const group = uniqueGroup('deleted');
      const [client, publisher] = [await open(), await open()];
      const history = Array.from({ length: 10 }, (_, seq) => testMessage('only-key', seq));
      await publisher.publish(topic, history);
      const first = await member(client, 0, { topic, group });
      await waitForAll(history);
      // Not while this client consumes in the group.
      await expect(client.deleteGroup(topic, group)).rejects.toThrow(group);
      await first.close();

      await client.deleteGroup(topic, group);
      if (target.consumerStateOf) expect(await target.consumerStateOf(topic)).toEqual([]);
      await client.deleteGroup(topic, group);
      await client.deleteGroup(topic, uniqueGroup('never-seen'));

      // Consuming again, the group is a new one: it replays from the beginning.
      await member(client, 1, { topic, group });
      await waitForAll(history, () => deliveries.filter((delivery) => delivery.member === 1));
      expect(deliveries.filter((delivery) => delivery.member === 1).map((delivery) => delivery.seq)).toEqual(
        Array.from({ length: 10 }, (_, seq) => seq),
      );
    });

    test("a new group consuming from 'latest' skips the history", async () => {
      const topic = uniqueTopic();
      const [client, publisher] = [await open(), await open()];
      await publisher.publish(
        topic,
        Array.from({ length: 20 }, (_, seq) => testMessage('only-key', seq)),
      );
      await member(client, 0, { topic, group: uniqueGroup('latest'), from: 'latest' });

      const fresh = Array.from({ length: 5 }, (_, i) => testMessage('only-key', 20 + i));
      await publisher.publish(topic, fresh);
      await waitForAll(fresh);
      expect(deliveries.map((delivery) => delivery.seq)).toEqual([20, 21, 22, 23, 24]);
    });

    test('delivers a batch again, on the same member, when its handler fails, before the messages behind it', async () => {
      const topic = uniqueTopic();
      const [client, publisher] = [await open(), await open()];
      let failures = 0;
      await member(client, 0, { topic, group: uniqueGroup('failing') }, async ({ seq }) => {
        if (seq === 2 && failures++ === 0) throw new Error('handler failed once');
      });

      const messages = Array.from({ length: 5 }, (_, seq) => testMessage('only-key', seq));
      await publisher.publish(topic, messages);
      await waitForAll(messages);
      await waitFor('message 4', () => batches.some((batch) => batch.handled && batch.seqs.includes(4)));

      const failed = batches.findIndex((batch) => !batch.handled);
      expect(failed).toBeGreaterThanOrEqual(0);
      // The retry is the same batch: the messages before the failure in it come again, none behind it first.
      expect(batches[failed + 1]!.seqs).toEqual(batches[failed]!.seqs);
      expect(batches.filter((batch) => batch.handled).flatMap((batch) => batch.seqs)).toEqual([
        0, 1, 2, 3, 4,
      ]);
    });

    test('hands a backlog over in batches of at most maxBatch, one partition each, in offset order, each once', async () => {
      const topic = uniqueTopic();
      const group = uniqueGroup('batched');
      const [client, publisher] = [await open(), await open()];
      const backlog = Array.from({ length: 30 }, (_, seq) => testMessage('only-key', seq));
      await publisher.publish(topic, backlog);

      const first = await member(client, 0, { topic, group, maxBatch: 8 });
      await waitForAll(backlog);
      await first.close();
      expect(batches.every((batch) => batch.seqs.length >= 1 && batch.seqs.length <= 8)).toBe(true);
      expect(new Set(batches.map((batch) => batch.partition)).size).toBe(1);
      const offsets = batches.flatMap((batch) => batch.offsets);
      expect(offsets).toEqual([...offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(batches.flatMap((batch) => batch.seqs)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      if (!target.batchesOfOne) expect(batches.some((batch) => batch.seqs.length > 1)).toBe(true);

      // Each batch was acknowledged: the group resumes after the backlog.
      const next = testMessage('only-key', 30);
      await member(client, 1, { topic, group, maxBatch: 8 });
      await publisher.publish(topic, [next]);
      await waitForAll([next], () => deliveries.filter((delivery) => delivery.member === 1));
      expect(deliveries.filter((delivery) => delivery.member === 1).map((delivery) => delivery.seq)).toEqual([
        30,
      ]);
    });

    test('followers each get every message published after follow() resolved, in order per key, none before, beside a group', async () => {
      const topic = uniqueTopic();
      const [a, b, publisher] = [await open(), await open(), await open()];
      const history = interleaved(keysNamed('old', 6), 3);
      await publisher.publish(topic, history);
      const follow = (client: EventLog, index: number) =>
        client.follow({
          topic,
          handler: eachMessage(async (message) => {
            deliveries.push({ member: index, key: message.key, seq: seqOf(message), message });
          }),
        });
      await follow(a, 0);
      await follow(b, 1);
      // A group of the same topic on a follower's client: following takes nothing from it.
      await member(a, 2, { topic, group: uniqueGroup('beside'), from: 'latest' });

      const keys = keysNamed('new', 12);
      const fresh = interleaved(keys, 5);
      for (let i = 0; i < fresh.length; i += 12) await publisher.publish(topic, fresh.slice(i, i + 12));
      const of = (index: number) => () => deliveries.filter((delivery) => delivery.member === index);
      for (const index of [0, 1, 2]) await waitForAll(fresh, of(index));
      for (const index of [0, 1, 2]) {
        expect(of(index)()).toHaveLength(fresh.length);
        const byKey = seqsByKey(of(index)());
        expect([...byKey.keys()].sort()).toEqual([...keys].sort());
        for (const key of keys) expect(byKey.get(key)).toEqual([0, 1, 2, 3, 4]);
      }
    });

    test('a follower hands over batches of at most maxBatch, and once closed gets nothing and leaves nothing behind', async () => {
      const topic = uniqueTopic();
      const [client, publisher] = [await open(), await open()];
      const sizes: number[] = [];
      const followed: DeliveredMessage[] = [];
      const follower = await client.follow({
        topic,
        maxBatch: 4,
        handler: async (batch) => {
          sizes.push(batch.messages.length);
          followed.push(...batch.messages);
        },
      });
      // One key, so one partition: the follower hands its messages over in offset order.
      const messages = Array.from({ length: 20 }, (_, seq) => testMessage('only-key', seq));
      await publisher.publish(topic, messages);
      await waitFor(`${messages.length} followed messages`, () => followed.length >= messages.length);
      expect(followed.map(seqOf)).toEqual(messages.map((_, seq) => seq));
      expect(Math.max(...sizes)).toBeLessThanOrEqual(4);

      await follower.close();
      await publisher.publish(topic, [testMessage('only-key', 20)]);
      await sleep(300);
      expect(followed).toHaveLength(messages.length);
      if (target.consumerStateOf) expect(await target.consumerStateOf(topic)).toEqual([]);
    });

    const { crash } = target;
    if (crash) {
      test(
        'delivers a message again, to another member, when the member holding it crashes',
        async () => {
          const topic = uniqueTopic();
          const group = uniqueGroup('crash');
          const members = [await open(), await open()];
          let holder: number | undefined;
          const hang = (delivery: Delivery): Promise<void> => {
            if (holder !== undefined) return Promise.resolve();
            holder = delivery.member;
            return new Promise<void>((resolve) => releaseHandlers.push(resolve));
          };
          await member(members[0]!, 0, { topic, group }, hang);
          await member(members[1]!, 1, { topic, group }, hang);

          const messages = Array.from({ length: 3 }, (_, seq) => testMessage('only-key', seq));
          const publisher = await open();
          await publisher.publish(topic, messages);
          await waitFor('a member to take the first message', () => holder !== undefined);
          const crashed = holder!;
          await crash(members[crashed]!);

          const survivor = () => deliveries.filter((delivery) => delivery.member !== crashed);
          await waitForAll(messages, survivor);
          expect(survivor().map((delivery) => delivery.seq)).toEqual([0, 1, 2]);
        },
        crashDetectionMs + deliveryTimeoutMs + 5_000,
      );
    }

    test('rejects invalid topics, groups and messages with a clear error', async () => {
      const client = await open();
      const handler = async () => {};
      await expect(client.publish('no spaces allowed', [testMessage('k', 0)])).rejects.toThrow(
        /invalid topic/,
      );
      await expect(client.consume({ topic: uniqueTopic(), group: 'a.b', handler })).rejects.toThrow(
        /invalid consumer group/,
      );
      await expect(
        client.consume({ topic: uniqueTopic(), group: 'valid', maxBatch: 0, handler }),
      ).rejects.toThrow(/invalid maxBatch 0/);
      await expect(client.follow({ topic: 'no spaces allowed', handler })).rejects.toThrow(/invalid topic/);
      await expect(client.deleteGroup(uniqueTopic(), 'a.b')).rejects.toThrow(/invalid consumer group/);
      await expect(client.follow({ topic: uniqueTopic(), maxBatch: 0, handler })).rejects.toThrow(
        /invalid maxBatch 0/,
      );
      await expect(
        client.publish(uniqueTopic(), [{ key: 'k', value: new Uint8Array(), headers: { ce_id: 'a\r\nb' } }]),
      ).rejects.toThrow(/header ce_id/);
      await expect(
        client.publish(uniqueTopic(), [{ key: '', value: new Uint8Array(), headers: {} }]),
      ).rejects.toThrow(/key must be/);
    });
  });
};
