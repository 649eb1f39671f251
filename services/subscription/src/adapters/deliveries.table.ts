import type { Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type {
  Deliveries,
  Delivery,
  DeliveryChannelType,
  DeliveryStatus,
  NewDelivery,
} from '../application/ports.js';

type DeliveryRow = {
  delivery_id: string;
  subscription_id: string;
  product_id: string;
  channel_index: number;
  channel_type: DeliveryChannelType;
  target: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at_ms: string | number | null;
  last_attempt_at_ms: string | number | null;
  last_error: string | null;
  created_at_ms: string | number;
  delivered_at_ms: string | number | null;
};

const optionalNumber = (value: string | number | null): number | undefined =>
  value === null ? undefined : Number(value);

const deliveryOf = (row: DeliveryRow): Delivery => {
  const nextAttemptAt = optionalNumber(row.next_attempt_at_ms);
  const lastAttemptAt = optionalNumber(row.last_attempt_at_ms);
  const deliveredAt = optionalNumber(row.delivered_at_ms);
  return {
    deliveryId: row.delivery_id,
    subscriptionId: row.subscription_id,
    productId: row.product_id,
    channelIndex: row.channel_index,
    channelType: row.channel_type,
    target: row.target,
    body: row.body,
    status: row.status,
    attempts: row.attempts,
    ...(nextAttemptAt === undefined ? {} : { nextAttemptAt }),
    ...(lastAttemptAt === undefined ? {} : { lastAttemptAt }),
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    createdAt: Number(row.created_at_ms),
    ...(deliveredAt === undefined ? {} : { deliveredAt }),
  };
};

/** How many deliveries a subscription's resource shows. */
export const RECENT_DELIVERIES_SHOWN = 100;

/**
 * The durable delivery queue. A worker claims due rows with `FOR UPDATE SKIP LOCKED` (replicas never claim the
 * same row) and, in the same statement, counts the attempt and pushes the row's due time a lease ahead: if the
 * worker dies mid-attempt, the row is due again once the lease ran out, and another worker takes it.
 */
export class DeliveriesTable implements Deliveries {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.deliveries`;
  }

  /** Enqueues, due at once; an existing (subscription, product, channel) row is left alone. */
  async enqueue(tx: Queryable, deliveries: readonly NewDelivery[], now: number): Promise<void> {
    if (deliveries.length === 0) return;
    const column = <K extends keyof NewDelivery>(key: K) => deliveries.map((delivery) => delivery[key]);
    await tx.query(
      `insert into ${this.table}
         (delivery_id, subscription_id, product_id, channel_index, channel_type, target, body,
          next_attempt_at_ms, created_at_ms)
       select d.id, d.subscription_id, d.product_id, d.channel_index, d.channel_type, d.target, d.body, $8, $8
       from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[])
         as d(id, subscription_id, product_id, channel_index, channel_type, target, body)
       on conflict (subscription_id, product_id, channel_index) do nothing`,
      [
        column('deliveryId'),
        column('subscriptionId'),
        column('productId'),
        column('channelIndex'),
        column('channelType'),
        column('target'),
        column('body'),
        now,
      ],
    );
  }

  /** Claims up to `limit` due deliveries for one attempt each (see the class comment). */
  async claimDue(db: Queryable, now: number, limit: number, leaseMs: number): Promise<Delivery[]> {
    const { rows } = await db.query<DeliveryRow>(
      `with due as (
         select delivery_id from ${this.table}
         where status = 'pending' and next_attempt_at_ms <= $1
         order by next_attempt_at_ms limit $2
         for update skip locked
       )
       update ${this.table} d
       set attempts = d.attempts + 1, last_attempt_at_ms = $1, next_attempt_at_ms = $1 + $3
       from due where d.delivery_id = due.delivery_id
       returning d.*`,
      [now, limit, leaseMs],
    );
    return rows.map(deliveryOf);
  }

  /** When the earliest pending delivery is due, or undefined when none is pending. */
  async nextDueAt(db: Queryable): Promise<number | undefined> {
    const { rows } = await db.query<{ due: string | number | null }>(
      `select min(next_attempt_at_ms) as due from ${this.table} where status = 'pending'`,
    );
    return optionalNumber(rows[0]?.due ?? null);
  }

  async markDelivered(db: Queryable, deliveryId: string, now: number): Promise<void> {
    await db.query(
      `update ${this.table} set status = 'delivered', delivered_at_ms = $2, next_attempt_at_ms = null,
         last_error = null
       where delivery_id = $1 and status = 'pending'`,
      [deliveryId, now],
    );
  }

  /** Records a failed attempt: due again at `retryAt`, or failed for good without one. */
  async markAttemptFailed(
    db: Queryable,
    deliveryId: string,
    error: string,
    retryAt: number | undefined,
  ): Promise<void> {
    await db.query(
      `update ${this.table}
       set last_error = $2, status = case when $3::bigint is null then 'failed' else 'pending' end,
           next_attempt_at_ms = $3::bigint
       where delivery_id = $1 and status = 'pending'`,
      [deliveryId, error, retryAt ?? null],
    );
  }

  /** A subscription's deliveries, newest first. */
  async recent(db: Queryable, subscriptionId: string): Promise<Delivery[]> {
    const { rows } = await db.query<DeliveryRow>(
      `select * from ${this.table} where subscription_id = $1
       order by created_at_ms desc, delivery_id desc limit $2`,
      [subscriptionId, RECENT_DELIVERIES_SHOWN],
    );
    return rows.map(deliveryOf);
  }
}
