import { randomUUID } from 'node:crypto';
import type { Database } from '@marketplace/database';
import type { Logger } from '@marketplace/platform';
import type { DeliveredMessage, SubscribeOptions } from './eventlog.port.js';
import { maxBatchOf } from './validation.js';
import { deliverUntilHandled, retryDelayMs, type RetryPolicy } from './delivery.js';
import { pause } from './timing.js';
import { WakeUp } from './wake-up.js';

/** Quoted, schema-qualified names of the embedded log's tables. */
export interface EmbeddedTables {
  readonly messages: string;
  readonly offsets: string;
  readonly members: string;
}

export interface GroupMemberSettings {
  readonly db: Database;
  readonly tables: EmbeddedTables;
  readonly partitions: number;
  readonly leaseMs: number;
  readonly pollIntervalMs: number;
  readonly batchSize: number;
  readonly retry: RetryPolicy;
  readonly logger: Logger;
  /** Tells every member of the group, in any process, that membership or ownership changed. */
  readonly announceMembership: (topic: string, group: string) => Promise<void>;
}

interface MessageRow extends Record<string, unknown> {
  offset: string;
  key: string;
  headers: Record<string, string>;
  value: Uint8Array;
}

interface Worker {
  readonly controller: AbortController;
  readonly wake: WakeUp;
  /** `releasing`: the group wants the partition elsewhere; the lease is released once the worker stopped. */
  state: 'running' | 'releasing' | 'stopping';
  done: Promise<void>;
}

/**
 * One member of a consumer group of the embedded log. Members share a group's partitions through leases in
 * `consumer_offsets`: every member renews its presence in `group_members` and wants the partitions whose number
 * modulo the count of live members equals its rank; it claims a wanted partition when the partition's lease is
 * free or expired, and hands back unwanted ones once the batch in hand is committed. A crashed member stops
 * renewing, so its partitions move after `leaseMs`. Works across processes sharing one PostgreSQL database.
 */
export class EmbeddedGroupMember {
  readonly id = randomUUID();
  private readonly workers = new Map<number, Worker>();
  private readonly stopping = new AbortController();
  private heartbeat: NodeJS.Timeout | undefined;
  private rebalancing: Promise<void> | undefined;
  private rebalanceAgain = false;

  readonly topic: string;
  readonly group: string;
  private readonly from: 'beginning' | 'latest';
  private readonly handler: SubscribeOptions['handler'];
  /** Messages per read, and so per batch. */
  private readonly readSize: number;

  constructor(
    private readonly settings: GroupMemberSettings,
    { topic, group, from = 'beginning', handler, maxBatch }: SubscribeOptions,
  ) {
    this.topic = topic;
    this.group = group;
    this.from = from;
    this.handler = handler;
    this.readSize = Math.min(settings.batchSize, maxBatchOf(maxBatch));
  }

  /**
   * Joins the group (creating it at `from` if new) and takes a first share of partitions. Register the member
   * for wake-ups before: its partitions are read from here on.
   */
  async join(): Promise<void> {
    const { db, tables, partitions, leaseMs, announceMembership } = this.settings;
    try {
      await db.query(
        `insert into ${tables.offsets} (topic, group_name, partition, committed_offset)
         select $1, $2, p, case when $4 then coalesce(
           (select max(m."offset") from ${tables.messages} m where m.topic = $1 and m.partition = p), 0) else 0 end
         from generate_series(0, $3 - 1) as p
         on conflict do nothing`,
        [this.topic, this.group, partitions, this.from === 'latest'],
      );
      await this.rebalanceOnce();
      await announceMembership(this.topic, this.group);
    } catch (error) {
      await this.close();
      throw error;
    }
    // Renewing three times per lease lets one renewal fail without losing anything.
    this.heartbeat = setInterval(() => this.requestRebalance(), Math.max(50, Math.floor(leaseMs / 3)));
  }

  /** New messages were published to these partitions of the topic. */
  messagesArrived(partitions: readonly number[]): void {
    for (const partition of partitions) this.workers.get(partition)?.wake.notify();
  }

  /** Someone joined, left or handed back a partition: look again at what to own (coalesced). */
  requestRebalance(): void {
    if (this.stopping.signal.aborted) return;
    if (this.rebalancing) {
      this.rebalanceAgain = true;
      return;
    }
    this.rebalancing = (async () => {
      do {
        this.rebalanceAgain = false;
        await this.rebalanceOnce().catch((error: unknown) =>
          this.settings.logger.warn({ err: error, topic: this.topic, group: this.group }, 'rebalance failed'),
        );
      } while (this.rebalanceAgain && !this.stopping.signal.aborted);
    })().finally(() => {
      this.rebalancing = undefined;
    });
  }

  /** Finishes the batches in hand, commits them, gives the partitions back and leaves the group. */
  async close(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort();
    clearInterval(this.heartbeat);
    await this.rebalancing;
    for (const worker of this.workers.values()) worker.controller.abort();
    await Promise.all([...this.workers.values()].map((worker) => worker.done));
    const { db, tables, logger, announceMembership } = this.settings;
    try {
      await db.query(
        `update ${tables.offsets} set owner = null, lease_until = null
         where topic = $1 and group_name = $2 and owner = $3`,
        [this.topic, this.group, this.id],
      );
      await db.query(
        `delete from ${tables.members} where topic = $1 and group_name = $2 and member_id = $3`,
        [this.topic, this.group, this.id],
      );
      await announceMembership(this.topic, this.group);
    } catch (error) {
      // The leases expire by themselves.
      logger.warn({ err: error, topic: this.topic, group: this.group }, 'leaving the group failed');
    }
  }

  private async rebalanceOnce(): Promise<void> {
    const { db, tables, partitions, leaseMs } = this.settings;
    const params = [this.topic, this.group, this.id, leaseMs];
    await db.query(
      `insert into ${tables.members} (topic, group_name, member_id, alive_until)
       values ($1, $2, $3, now() + $4::int * interval '1 millisecond')
       on conflict (topic, group_name, member_id) do update set alive_until = excluded.alive_until`,
      params,
    );
    await db.query(
      `delete from ${tables.members} where topic = $1 and group_name = $2 and alive_until < now()`,
      [this.topic, this.group],
    );
    const { rows: live } = await db.query<{ member_id: string }>(
      `select member_id from ${tables.members} where topic = $1 and group_name = $2 order by member_id`,
      [this.topic, this.group],
    );
    const rank = live.findIndex((row) => row.member_id === this.id);
    const wanted = new Set(
      Array.from({ length: partitions }, (_, partition) => partition).filter(
        (partition) => rank >= 0 && partition % live.length === rank,
      ),
    );
    for (const [partition, worker] of this.workers) {
      if (!wanted.has(partition) && worker.state === 'running') {
        worker.state = 'releasing';
        worker.controller.abort();
      }
    }

    // Claims the wanted partitions that are free, and renews the leases of those this member still holds.
    const keep = [...wanted, ...[...this.workers].filter(([, w]) => w.state === 'releasing').map(([p]) => p)];
    const { rows: held } = await db.query<{ partition: number; committed_offset: string }>(
      `update ${tables.offsets} set owner = $3, lease_until = now() + $4::int * interval '1 millisecond'
       where topic = $1 and group_name = $2 and partition = any($5::int[])
         and (owner is null or owner = $3 or lease_until < now())
       returning partition, committed_offset`,
      [...params, keep],
    );
    const heldPartitions = new Set(held.map((row) => row.partition));
    for (const [partition, worker] of this.workers) {
      if (!heldPartitions.has(partition) && worker.state === 'running') {
        this.settings.logger.warn(
          { topic: this.topic, group: this.group, partition },
          'partition lease lost',
        );
        worker.state = 'stopping';
        worker.controller.abort();
      }
    }
    if (this.stopping.signal.aborted) return;
    for (const { partition, committed_offset } of held) {
      if (wanted.has(partition) && !this.workers.has(partition))
        this.startWorker(partition, committed_offset);
    }
  }

  private startWorker(partition: number, committedOffset: string): void {
    const worker: Worker = {
      controller: new AbortController(),
      wake: new WakeUp(),
      state: 'running',
      done: Promise.resolve(),
    };
    this.workers.set(partition, worker);
    worker.done = this.consume(partition, committedOffset, worker)
      .catch((error: unknown) =>
        this.settings.logger.error({ err: error, topic: this.topic, partition }, 'partition worker failed'),
      )
      .then(async () => {
        if (worker.state === 'releasing') await this.release(partition);
      })
      .finally(() => {
        this.workers.delete(partition);
        this.requestRebalance();
      });
  }

  private async release(partition: number): Promise<void> {
    const { db, tables, logger, announceMembership } = this.settings;
    try {
      await db.query(
        `update ${tables.offsets} set owner = null, lease_until = null
         where topic = $1 and group_name = $2 and partition = $3 and owner = $4`,
        [this.topic, this.group, partition, this.id],
      );
      await announceMembership(this.topic, this.group);
    } catch (error) {
      logger.warn(
        { err: error, topic: this.topic, partition },
        'releasing a partition failed; its lease will expire',
      );
    }
  }

  /**
   * Reads the partition after `committedOffset`, a batch per read, handing each batch to the handler and then
   * committing its last offset (one statement per batch, which also renews the lease).
   */
  private async consume(partition: number, committedOffset: string, worker: Worker): Promise<void> {
    const { db, tables, pollIntervalMs, retry, logger, leaseMs } = this.settings;
    const batchSize = this.readSize;
    const stop = worker.controller.signal;
    let committed = committedOffset;
    for (let failures = 0; !stop.aborted;) {
      const seen = worker.wake.generation;
      let rows: MessageRow[];
      try {
        ({ rows } = await db.query<MessageRow>(
          `select "offset", key, headers, value from ${tables.messages}
           where topic = $1 and partition = $2 and "offset" > $3 order by "offset" limit $4`,
          [this.topic, partition, committed, batchSize],
        ));
        failures = 0;
      } catch (error) {
        logger.warn({ err: error, topic: this.topic, partition }, 'reading the log failed; retrying');
        await pause(retryDelayMs(retry, ++failures), stop);
        continue;
      }
      const last = rows.at(-1);
      if (last !== undefined) {
        if (stop.aborted) return;
        const messages = rows.map((row): DeliveredMessage => ({
          topic: this.topic,
          partition,
          offset: row.offset,
          key: row.key,
          headers: row.headers,
          value: new Uint8Array(row.value),
        }));
        const batch = { topic: this.topic, partition, messages };
        if (
          (await deliverUntilHandled(batch, this.handler, { retry, signal: stop, logger })) === 'abandoned'
        ) {
          return;
        }
        // Committing renews the lease too; no row means another member took the partition over.
        const { rowCount } = await db.query(
          `update ${tables.offsets}
           set committed_offset = $4, lease_until = now() + $6::int * interval '1 millisecond'
           where topic = $1 and group_name = $2 and partition = $3 and owner = $5`,
          [this.topic, this.group, partition, last.offset, this.id, leaseMs],
        );
        if (rowCount === 0) {
          logger.warn({ topic: this.topic, group: this.group, partition }, 'partition taken over; stopping');
          return;
        }
        committed = last.offset;
      }
      // A short batch was the whole partition as of the read; a message committed since has woken the worker
      // (the generation moved, so this returns at once). Reading again right away would find nothing: at one
      // message per wake-up that empty read was half of the log's reads.
      if (rows.length < batchSize) await worker.wake.wait(seen, pollIntervalMs, stop);
    }
  }
}
