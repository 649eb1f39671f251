import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import type { DeliveredMessage, EventLog, ConsumeOptions } from '@marketplace/eventlog';
import { StaleProjectionOwnerError, startProjection } from '../src/index.js';
import { dropSchema, migratedSchema } from './support/engines.js';

const TOPIC = 'marketplace.stock.v1';

/** One subscriber's handler, called by the test as the log would call it. */
interface Member {
  deliver(partition: number, messages: readonly DeliveredMessage[]): Promise<void>;
}

/** An EventLog double whose single subscription the test drives by hand, batch by batch. */
const handDrivenLog = (): { log: EventLog; member: () => Member } => {
  let options: ConsumeOptions | undefined;
  return {
    log: {
      publish: async () => {
        throw new Error('the projection never publishes');
      },
      consume: async (subscribed) => {
        options = subscribed;
        return { close: async () => {} };
      },
      follow: async () => {
        throw new Error('the projection never follows');
      },
      deleteGroup: async () => {
        throw new Error('the projection never deletes a group');
      },
      close: async () => {},
    },
    member: () => {
      const subscribed = options!;
      return {
        deliver: (partition, messages) => subscribed.handler({ topic: TOPIC, partition, messages }),
      };
    },
  };
};

/** A stock event as delivered: `key/quantity` is its event id unless `eventId` says otherwise. */
const message = (
  offset: number,
  key: string,
  quantity: number,
  eventId = `${key}/${quantity}`,
): DeliveredMessage => ({
  topic: TOPIC,
  partition: 0,
  offset: String(offset),
  key,
  value: new TextEncoder().encode(JSON.stringify({ quantity })),
  headers: { ce_id: eventId },
});

/** The same stock event delivered on another partition of the topic. */
const onPartition = (partition: number, offset: number, key: string, quantity: number): DeliveredMessage => ({
  ...message(offset, key, quantity),
  partition,
});

/** Counts the transactions opened on `db`, the unit of work a batch should cost, and the statements run in them. */
const countingTransactions = (
  db: Database,
): { db: Database; transactions: () => number; statements: () => number } => {
  let transactions = 0;
  let statements = 0;
  return {
    transactions: () => transactions,
    statements: () => statements,
    db: {
      engine: db.engine,
      query: (sql, params) => db.query(sql, params),
      transaction: (work, options) => {
        transactions++;
        return db.transaction(
          (tx) =>
            work({
              query: (sql, params) => {
                statements++;
                return tx.query(sql, params);
              },
            }),
          options,
        );
      },
      listen: (channel, onNotify) => db.listen(channel, onNotify),
      afterCommit: (callback) => db.afterCommit(callback),
      withAdvisoryLock: (key, work, options) => db.withAdvisoryLock(key, work, options),
      close: async () => {},
    },
  };
};

describe.each(testEngines())('batched projection on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let group: string;
  let groupNumber = 0;

  /**
   * A member of `group` applying stock events: the quantities of a key are appended in the order applied, a
   * write that is not idempotent on its own (applying an event twice shows twice, out of order shows too).
   */
  const startMember = async (
    options: {
      fail?: (quantity: number) => boolean;
      on?: Database;
      supersedes?: (event: { quantity: number }) => boolean;
      dedupWindowMs?: number;
    } = {},
  ): Promise<Member> => {
    const { log, member } = handDrivenLog();
    await startProjection({
      log,
      db: options.on ?? db,
      schema,
      topic: TOPIC,
      group,
      ...(options.supersedes ? { supersedes: options.supersedes } : {}),
      ...(options.dedupWindowMs ? { dedupWindowMs: options.dedupWindowMs } : {}),
      decode: (delivered) => JSON.parse(new TextDecoder().decode(delivered.value)) as { quantity: number },
      apply: async (tx, { quantity }, delivered) => {
        await tx.query(
          `insert into ${schema}.stock_history (projection, stream_id, quantities) values ($1, $2, array[$3::int])
           on conflict (projection, stream_id)
           do update set quantities = stock_history.quantities || excluded.quantities`,
          [group, delivered.key, quantity],
        );
        if (options.fail?.(quantity)) throw new Error(`the read model failed on ${quantity}`);
      },
    });
    return member();
  };

  const history = async (): Promise<Record<string, number[]>> => {
    const { rows } = await db.query<{ stream_id: string; quantities: number[] }>(
      `select stream_id, quantities from ${schema}.stock_history where projection = $1`,
      [group],
    );
    return Object.fromEntries(rows.map((row) => [row.stream_id, row.quantities]));
  };
  const appliedEventIds = async (): Promise<string[]> => {
    const { rows } = await db.query<{ event_id: string }>(
      `select event_id from ${schema}.projection_applied_events where projection = $1 order by event_id`,
      [group],
    );
    return rows.map((row) => row.event_id);
  };
  const storedOffset = async (partition = 0): Promise<{ offset: string; epoch: string } | undefined> => {
    const { rows } = await db.query<{ offset: string; epoch: string }>(
      `select committed_offset::text as offset, owner_epoch::text as epoch from ${schema}.projection_offsets
       where projection = $1 and topic = $2 and partition = $3`,
      [group, TOPIC, partition],
    );
    return rows[0];
  };

  beforeAll(async () => {
    db = await create();
    schema = await migratedSchema(db, 'es_batches');
    await db.query(
      `create table ${schema}.stock_history (projection text, stream_id text, quantities integer[] not null,
         primary key (projection, stream_id))`,
    );
  });
  beforeEach(() => {
    group = `batches-${++groupNumber}`;
  });
  afterAll(async () => {
    await dropSchema(db, schema);
    await db.close();
  });

  it('applies a batch in one transaction, in order per key, and stores its last offset there', async () => {
    const counting = countingTransactions(db);
    const member = await startMember({ on: counting.db });

    await member.deliver(0, [
      message(1, 'stock_a', 1),
      message(2, 'stock_b', 1),
      message(3, 'stock_a', 2),
      message(4, 'stock_a', 3),
      message(5, 'stock_b', 2),
    ]);

    expect(counting.transactions()).toBe(1);
    expect(await history()).toEqual({ stock_a: [1, 2, 3], stock_b: [1, 2] });
    expect(await storedOffset()).toEqual({ offset: '5', epoch: '1' });
  });

  it('costs a later batch one statement besides its applies: the offset and the event ids together', async () => {
    const counting = countingTransactions(db);
    const member = await startMember({ on: counting.db });
    await member.deliver(0, [message(1, 'stock_a', 1)]);
    const afterFirst = counting.statements();

    await member.deliver(0, [message(2, 'stock_a', 2), message(3, 'stock_b', 1), message(4, 'stock_a', 2)]);

    // Two applies (the third message repeats an event id) and one statement for the offset and the ids.
    expect(counting.statements() - afterFirst).toBe(3);
    expect(await history()).toEqual({ stock_a: [1, 2], stock_b: [1] });
    expect(await appliedEventIds()).toEqual(['stock_a/1', 'stock_a/2', 'stock_b/1']);
    expect(await storedOffset()).toEqual({ offset: '4', epoch: '1' });
  });

  it('applies an event once when it comes twice in a batch, again in a later batch, or under a new offset', async () => {
    const member = await startMember();

    // The same message twice in one batch (an adapter's redelivery), and a copy the relay published again.
    await member.deliver(0, [message(1, 'stock_a', 1), message(1, 'stock_a', 1), message(2, 'stock_a', 2)]);
    await member.deliver(0, [message(3, 'stock_a', 2)]);
    // A redelivery across batches: offsets at or below the stored one are skipped.
    await member.deliver(0, [message(2, 'stock_a', 2), message(3, 'stock_a', 2), message(4, 'stock_a', 3)]);

    expect(await history()).toEqual({ stock_a: [1, 2, 3] });
    expect(await storedOffset()).toEqual({ offset: '4', epoch: '1' });
    expect(await appliedEventIds()).toHaveLength(3);
  });

  it('applies nothing of a batch that fails midway, and all of it when the batch comes again', async () => {
    let failures = 0;
    const member = await startMember({ fail: (quantity) => quantity === 3 && failures++ === 0 });
    await member.deliver(0, [message(1, 'stock_a', 1)]);

    const batch = [message(2, 'stock_a', 2), message(3, 'stock_a', 3), message(4, 'stock_b', 1)];
    await expect(member.deliver(0, batch)).rejects.toThrow('the read model failed on 3');
    expect(await history()).toEqual({ stock_a: [1] });
    expect(await storedOffset()).toEqual({ offset: '1', epoch: '1' });

    await member.deliver(0, batch);
    expect(await history()).toEqual({ stock_a: [1, 2, 3], stock_b: [1] });
    // After a failure the member claims again (epoch 2): it re-reads the stored offset rather than trust its own.
    expect(await storedOffset()).toEqual({ offset: '4', epoch: '2' });
  });

  it('fences a stale owner: its batch rolls back, and its retry resumes after what the new owner stored', async () => {
    const stale = await startMember();
    await stale.deliver(0, [message(1, 'stock_a', 1), message(2, 'stock_a', 2)]);

    // The partition moved (a rebalance, an expired lease): the new owner claims it and gets the batch again.
    const owner = await startMember();
    await owner.deliver(0, [message(2, 'stock_a', 2), message(3, 'stock_a', 3)]);
    expect(await storedOffset()).toEqual({ offset: '3', epoch: '2' });

    // The old owner, not knowing yet, applies the next batch: its offset update finds another epoch.
    const next = [message(3, 'stock_a', 3), message(4, 'stock_a', 4)];
    await expect(stale.deliver(0, next)).rejects.toThrow(StaleProjectionOwnerError);
    expect(await history()).toEqual({ stock_a: [1, 2, 3] });
    expect(await storedOffset()).toEqual({ offset: '3', epoch: '2' });

    // Its retry claims afresh and reads the stored offset: only what nobody applied yet is applied.
    await stale.deliver(0, next);
    expect(await history()).toEqual({ stock_a: [1, 2, 3, 4] });
    expect(await storedOffset()).toEqual({ offset: '4', epoch: '3' });
    // The superseded member now fails in turn, then carries on from the stored offset.
    await expect(owner.deliver(0, [message(5, 'stock_a', 5)])).rejects.toThrow(StaleProjectionOwnerError);
    await owner.deliver(0, [message(4, 'stock_a', 4), message(5, 'stock_a', 5)]);
    expect(await history()).toEqual({ stock_a: [1, 2, 3, 4, 5] });
  });

  it('with supersedes, applies only the newest state of a key in a batch, and records every event id', async () => {
    // Quantity 0 stands for an event that carries no state (it replaces nothing).
    const member = await startMember({ supersedes: ({ quantity }) => quantity !== 0 });

    await member.deliver(0, [
      message(1, 'stock_a', 1),
      message(2, 'stock_b', 1),
      message(3, 'stock_a', 2),
      message(4, 'stock_a', 0),
      message(5, 'stock_b', 2),
      message(6, 'stock_b', 3),
    ]);

    expect(await history()).toEqual({ stock_a: [2, 0], stock_b: [3] });
    expect(await appliedEventIds()).toHaveLength(6);
  });

  it('with applyBatch, hands the batch its new events at once, deduplicated, superseded and in order', async () => {
    const counting = countingTransactions(db);
    const { log, member } = handDrivenLog();
    const handed: string[][] = [];
    await startProjection<{ quantity: number }>({
      log,
      db: counting.db,
      schema,
      topic: TOPIC,
      group,
      supersedes: ({ quantity }) => quantity !== 0,
      decode: (delivered) => JSON.parse(new TextDecoder().decode(delivered.value)) as { quantity: number },
      // One statement for the whole batch: each key's quantities appended in offset order.
      applyBatch: async (tx, events) => {
        handed.push(events.map(({ event, message: delivered }) => `${delivered.key}/${event.quantity}`));
        await tx.query(
          `insert into ${schema}.stock_history (projection, stream_id, quantities)
           select $1, stream_id, array_agg(quantity order by n)
           from unnest($2::text[], $3::int[]) with ordinality as e(stream_id, quantity, n) group by stream_id
           on conflict (projection, stream_id)
           do update set quantities = stock_history.quantities || excluded.quantities`,
          [group, events.map((entry) => entry.message.key), events.map((entry) => entry.event.quantity)],
        );
      },
    });
    const batches = member();
    await batches.deliver(0, [message(1, 'stock_a', 1)]);
    const afterFirst = counting.statements();

    await batches.deliver(0, [
      message(1, 'stock_a', 1), // at the stored offset: a redelivery
      message(2, 'stock_a', 1), // a copy published again under a new offset
      message(3, 'stock_b', 1),
      message(4, 'stock_a', 2),
      message(5, 'stock_a', 0),
      message(6, 'stock_b', 2),
      message(7, 'stock_c', 5),
    ]);
    // A batch with nothing new does not call applyBatch.
    await batches.deliver(0, [message(7, 'stock_c', 5)]);

    expect(handed).toEqual([['stock_a/1'], ['stock_a/2', 'stock_a/0', 'stock_b/2', 'stock_c/5']]);
    // The offset with the event ids, then the batch's one statement; the empty batch moves nothing but the offset.
    expect(counting.statements() - afterFirst).toBe(3);
    expect(await history()).toEqual({ stock_a: [1, 2, 0], stock_b: [2], stock_c: [5] });
    expect(await storedOffset()).toEqual({ offset: '7', epoch: '1' });
  });

  it('forgets the ids of events applied longer ago than the dedup window, after a later batch', async () => {
    const member = await startMember({ dedupWindowMs: 300 });
    await member.deliver(0, [message(1, 'stock_a', 1), message(2, 'stock_a', 2)]);
    await new Promise((resolve) => setTimeout(resolve, 600));

    await member.deliver(0, [message(3, 'stock_a', 3)]);

    expect(await appliedEventIds()).toEqual(['stock_a/3']);
    expect(await history()).toEqual({ stock_a: [1, 2, 3] });
  });

  it('applies the batches of partitions handed over while a transaction runs in the next one, together', async () => {
    const counting = countingTransactions(db);
    const member = await startMember({ on: counting.db });

    // The first batch starts a transaction at once; the three handed over meanwhile wait and go in one more.
    await Promise.all([
      member.deliver(0, [message(1, 'stock_a', 1)]),
      member.deliver(1, [onPartition(1, 1, 'stock_b', 1), onPartition(1, 2, 'stock_b', 2)]),
      member.deliver(2, [onPartition(2, 4, 'stock_c', 1)]),
      member.deliver(3, [onPartition(3, 2, 'stock_d', 1)]),
    ]);

    expect(counting.transactions()).toBe(2);
    expect(await history()).toEqual({ stock_a: [1], stock_b: [1, 2], stock_c: [1], stock_d: [1] });
    expect(await storedOffset(1)).toEqual({ offset: '2', epoch: '1' });
    expect(await storedOffset(2)).toEqual({ offset: '4', epoch: '1' });
    expect(await storedOffset(3)).toEqual({ offset: '2', epoch: '1' });
  });

  /** Hands over a batch on each of four partitions at once, partition 2's failing (quantity 9): their outcomes. */
  const handFourWithOneFailing = async (member: Awaited<ReturnType<typeof startMember>>) =>
    (
      await Promise.allSettled([
        member.deliver(0, [message(1, 'stock_a', 1)]),
        member.deliver(1, [onPartition(1, 1, 'stock_b', 1)]),
        member.deliver(2, [onPartition(2, 1, 'stock_c', 9)]),
        member.deliver(3, [onPartition(3, 1, 'stock_d', 1)]),
      ])
    ).map((outcome) => outcome.status);

  it('fails only the failing batch of those applied together, and applies the others', async () => {
    const member = await startMember({ fail: (quantity) => quantity === 9 });

    expect(await handFourWithOneFailing(member)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(await history()).toEqual({ stock_a: [1], stock_b: [1], stock_d: [1] });
    expect(await storedOffset(2)).toBeUndefined();
    expect(await storedOffset(3)).toEqual({ offset: '1', epoch: '1' });
  });

  it('applies a batch whose last attempt failed alone, so the others handed over with it still share one transaction', async () => {
    const counting = countingTransactions(db);
    const member = await startMember({ on: counting.db, fail: (quantity) => quantity === 9 });
    await expect(member.deliver(2, [onPartition(2, 1, 'stock_c', 9)])).rejects.toThrow('failed on 9');
    const before = counting.transactions();

    expect(await handFourWithOneFailing(member)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    // The first alone (nothing was running), partitions 1 and 3 together, the failing one alone.
    expect(counting.transactions() - before).toBe(3);
    expect(await history()).toEqual({ stock_a: [1], stock_b: [1], stock_d: [1] });
  });

  it('keeps one stored offset per partition', async () => {
    const member = await startMember();
    await member.deliver(0, [message(7, 'stock_a', 1)]);
    await member.deliver(3, [onPartition(3, 2, 'stock_b', 1)]);

    expect(await storedOffset(0)).toEqual({ offset: '7', epoch: '1' });
    expect(await storedOffset(3)).toEqual({ offset: '2', epoch: '1' });
    expect(await history()).toEqual({ stock_a: [1], stock_b: [1] });
  });
});
