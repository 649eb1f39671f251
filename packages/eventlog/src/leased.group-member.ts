import { randomUUID } from 'node:crypto';
import type { Database } from '@marketplace/database';
import type { ConsumeOptions } from './eventlog.port.js';
import { maxBatchOf } from './validation.js';
import {
  BatchRounds,
  newPartitionWorker,
  readPartition,
  type PartitionReadSettings,
  type PartitionWorker,
} from './partition-worker.js';

/** Quoted, schema-qualified names of the group tables (`consumer_offsets`, `group_members`). */
export interface GroupTables {
  readonly offsets: string;
  readonly members: string;
}

export interface GroupMemberSettings extends PartitionReadSettings {
  readonly db: Database;
  readonly tables: GroupTables;
  /** False while the member cannot reach the log (its leases are then left to expire). Default: always. */
  readonly connected?: () => boolean;
  readonly partitions: number;
  readonly leaseMs: number;
  /** Tells every member of the group, in any process, that membership or ownership changed. */
  readonly announceMembership: (topic: string, group: string) => Promise<void>;
}

/** A partition worker whose `handled` offset is committed with the next lease renewal, or when it stops. */
interface Worker extends PartitionWorker {
  /** `releasing`: the group wants the partition elsewhere; the lease is released once the worker stopped. */
  state: 'running' | 'releasing' | 'stopping';
  done: Promise<void>;
}

/**
 * `EventLog.deleteGroup` for the logs whose groups are rows of the group tables (embedded, NATS): refuses while a
 * member of this client, or a live member of another process, is in the group; then deletes the group's offsets
 * and the memberships of members that died, in one transaction.
 */
export const deleteGroupRows = async (
  db: Database,
  tables: GroupTables,
  members: Iterable<LeasedGroupMember>,
  topic: string,
  group: string,
): Promise<void> => {
  for (const member of members) {
    if (member.topic === topic && member.group === group)
      throw new Error(
        `the group ${group} still consumes ${topic} here: close its consumer before deleting it`,
      );
  }
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ live: number }>(
      `select count(*)::int as live from ${tables.members}
       where topic = $1 and group_name = $2 and alive_until >= now()`,
      [topic, group],
    );
    if (rows[0]!.live > 0)
      throw new Error(
        `the group ${group} still consumes ${topic} in another process: stop it before deleting it`,
      );
    await tx.query(`delete from ${tables.offsets} where topic = $1 and group_name = $2`, [topic, group]);
    await tx.query(`delete from ${tables.members} where topic = $1 and group_name = $2`, [topic, group]);
  });
};

/**
 * One member of a consumer group whose offsets and partition leases are rows of a PostgreSQL database (the
 * embedded log's, or, on NATS, the consuming service's own). Members share a group's partitions through leases in
 * `consumer_offsets`: every member renews its presence in `group_members` and wants the partitions whose number
 * modulo the count of live members equals its rank; it claims a wanted partition when the partition's lease is
 * free or expired, and hands back unwanted ones once the batch in hand is committed. A crashed member stops
 * renewing, so its partitions move after `leaseMs`. Works across processes sharing one PostgreSQL database.
 * The messages come from a `PartitionSource`; the owner reads a batch and hands it over. It commits the last
 * offset handled with each lease renewal and when it stops owning the partition, not batch by batch
 * (docs/architecture.md, the batched pipeline): a crash redelivers what was handled since the last renewal.
 */
export class LeasedGroupMember {
  readonly id = randomUUID();
  private readonly workers = new Map<number, Worker>();
  private readonly stopping = new AbortController();
  private heartbeat: NodeJS.Timeout | undefined;
  /** The join in progress: `close()` waits for it, so that what it claims is released and it starts no timer. */
  private joining: Promise<void> | undefined;
  private rebalancing: Promise<void> | undefined;
  private rebalanceAgain = false;
  private readonly rounds: BatchRounds;

  readonly topic: string;
  readonly group: string;
  private readonly from: 'beginning' | 'latest';
  private readonly handler: ConsumeOptions['handler'];
  /** Messages per read, and so per batch. */
  private readonly readSize: number;

  constructor(
    private readonly settings: GroupMemberSettings,
    { topic, group, from = 'beginning', handler, maxBatch }: ConsumeOptions,
  ) {
    this.topic = topic;
    this.group = group;
    this.from = from;
    this.handler = handler;
    this.readSize = Math.min(settings.batchSize, maxBatchOf(maxBatch));
    this.rounds = new BatchRounds(settings.batchIntervalMs);
  }

  /**
   * Joins the group (creating it at `from` if new) and takes a first share of partitions. Register the member
   * for wake-ups before: its partitions are read from here on.
   */
  async join(): Promise<void> {
    const joining = this.enter();
    this.joining = joining.catch(() => undefined);
    await joining;
  }

  private async enter(): Promise<void> {
    const { db, tables, leaseMs, announceMembership, source } = this.settings;
    try {
      const starts = await source.startOffsets(this.topic, this.group, this.from);
      await db.query(
        `insert into ${tables.offsets} (topic, group_name, partition, committed_offset)
         select $1, $2, p - 1, start from unnest($3::bigint[]) with ordinality as s(start, p)
         on conflict do nothing`,
        [this.topic, this.group, starts],
      );
      await this.rebalanceOnce();
      await announceMembership(this.topic, this.group);
    } catch (error) {
      this.stopping.abort();
      await this.leave();
      throw error;
    }
    // Closed while joining: close() waits for this join, then releases what it claimed. A heartbeat started now
    // would outlive the member (a timer that kept a closed log's process alive).
    if (this.stopping.signal.aborted) return;
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
    await this.joining;
    await this.leave();
  }

  /** What `close()` does once no join runs: stops the workers and the heartbeat, releases leases and membership. */
  private async leave(): Promise<void> {
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
    const { db, tables, partitions, leaseMs, connected } = this.settings;
    // Cut off from the log, the member can do nothing with its partitions: its leases lapse, others take over.
    if (connected && !connected()) return;
    const params = [this.topic, this.group, this.id, leaseMs];
    // Renews this member, forgets the expired ones and lists the live ones in one statement; its parts see the
    // same snapshot, so the list is the others still alive and this member.
    const { rows: live } = await db.query<{ member_id: string }>(
      `with renewed as (
         insert into ${tables.members} (topic, group_name, member_id, alive_until)
         values ($1, $2, $3, now() + $4::int * interval '1 millisecond')
         on conflict (topic, group_name, member_id) do update set alive_until = excluded.alive_until
       ), expired as (
         delete from ${tables.members}
         where topic = $1 and group_name = $2 and member_id <> $3 and alive_until < now()
       )
       select member_id from ${tables.members}
       where topic = $1 and group_name = $2 and member_id <> $3 and alive_until >= now()
       union all select $3::text
       order by member_id`,
      params,
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

    // Claims the wanted partitions that are free, and renews the leases of those this member still holds,
    // committing what their workers handled since the last commit (only where the lease was still its own).
    const keep = [...wanted, ...[...this.workers].filter(([, w]) => w.state === 'releasing').map(([p]) => p)];
    const handled = [...this.workers.entries()]
      .map(([partition, worker]) => ({ partition, worker, offset: worker.handled }))
      .filter((entry) => entry.offset !== undefined);
    const { rows: held } = await db.query<{ partition: number; committed_offset: string }>(
      `update ${tables.offsets} o
       set owner = $3, lease_until = now() + $4::int * interval '1 millisecond',
         committed_offset = case when o.owner = $3
           then greatest(o.committed_offset, coalesce(
             (select h.handled from unnest($6::int[], $7::bigint[]) as h(partition, handled)
              where h.partition = o.partition), o.committed_offset))
           else o.committed_offset end
       where topic = $1 and group_name = $2 and partition = any($5::int[])
         and (owner is null or owner = $3 or lease_until < now())
       returning partition, committed_offset`,
      [...params, keep, handled.map((entry) => entry.partition), handled.map((entry) => entry.offset)],
    );
    for (const { worker, offset } of handled) if (worker.handled === offset) worker.handled = undefined;
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
    const worker: Worker = { ...newPartitionWorker(), state: 'running', done: Promise.resolve() };
    this.workers.set(partition, worker);
    // What was handled is committed by the next lease renewal (rebalanceOnce), one statement for all of the
    // member's partitions every `leaseMs / 3`, not one per batch.
    const consumer = {
      topic: this.topic,
      partition,
      after: committedOffset,
      readSize: this.readSize,
      handler: this.handler,
    };
    worker.done = readPartition(this.settings, this.rounds, consumer, worker)
      .catch((error: unknown) =>
        this.settings.logger.error({ err: error, topic: this.topic, partition }, 'partition worker failed'),
      )
      .then(() => this.settle(partition, worker))
      .finally(() => {
        this.workers.delete(partition);
        this.requestRebalance();
      });
  }

  /**
   * After a worker stopped: commits what it handled since the last lease renewal and, when the group wants the
   * partition elsewhere, releases it, in one statement (nothing when another member owns it by now).
   */
  private async settle(partition: number, worker: Worker): Promise<void> {
    const release = worker.state === 'releasing';
    if (!release && worker.handled === undefined) return;
    const { db, tables, logger, announceMembership } = this.settings;
    try {
      await db.query(
        `update ${tables.offsets}
         set committed_offset = greatest(committed_offset, coalesce($5::bigint, committed_offset)),
           owner = case when $6 then null else owner end,
           lease_until = case when $6 then null else lease_until end
         where topic = $1 and group_name = $2 and partition = $3 and owner = $4`,
        [this.topic, this.group, partition, this.id, worker.handled ?? null, release],
      );
      worker.handled = undefined;
      if (release) await announceMembership(this.topic, this.group);
    } catch (error) {
      logger.warn(
        { err: error, topic: this.topic, partition },
        'settling a partition failed; its lease will expire and what it handled since its last commit comes again',
      );
    }
  }
}
