import type { Queryable, Transaction } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { Order } from '../domain/order.events.js';
import type { OrderRecords, VersionedOrder } from '../application/ports.js';

interface OrderRow {
  [column: string]: unknown;
  state: Order;
  version: string | number;
}

const versioned = (row: OrderRow): VersionedOrder => ({ order: row.state, version: Number(row.version) });

/**
 * The current state of every order, written in the same transaction as the order's events (so it is never
 * behind them) and read by the queries that select orders by seller, buyer, status or deadline.
 */
export class OrdersTable implements OrderRecords {
  private readonly table: string;
  private readonly sequence: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.orders`;
    this.sequence = `${quoteIdent(schema)}.order_number_seq`;
  }

  /** Order ids come from a sequence, never from counting rows: concurrent checkouts never collide. */
  async allocateOrderId(tx: Transaction): Promise<number> {
    const { rows } = await tx.query<{ n: string }>('select nextval($1::regclass) as n', [this.sequence]);
    const n = Number(rows[0]?.n);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${this.sequence} returned ${String(rows[0]?.n)}`);
    return n;
  }

  async save(tx: Transaction, { order, version }: VersionedOrder): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.table} AS o (order_id, seller_account_id, buyer_account_id, status, placed_at_ms,
         ship_by_ms, inspection_deadline_ms, issue_reported_at_ms, version, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)
       ON CONFLICT (order_id) DO UPDATE SET status = excluded.status,
         inspection_deadline_ms = excluded.inspection_deadline_ms,
         issue_reported_at_ms = excluded.issue_reported_at_ms, version = excluded.version, state = excluded.state
       WHERE o.version < excluded.version`,
      [
        order.orderId,
        order.sellerAccountId,
        order.buyerAccountId,
        order.status,
        order.placedAt,
        order.shipBy,
        order.inspectionDeadline ?? null,
        order.issue?.reportedAt ?? null,
        version,
        JSON.stringify(order),
      ],
    );
  }

  async get(db: Queryable, orderId: number): Promise<VersionedOrder | undefined> {
    const { rows } = await db.query<OrderRow>(
      `SELECT state, version FROM ${this.table} WHERE order_id = $1`,
      [orderId],
    );
    return rows[0] && versioned(rows[0]);
  }

  /** The seller's orders among `orderIds`; the others (unknown or someone else's) are simply absent. */
  async ofSeller(
    db: Queryable,
    sellerAccountId: number,
    orderIds: readonly number[],
  ): Promise<VersionedOrder[]> {
    const { rows } = await db.query<OrderRow>(
      `SELECT state, version FROM ${this.table} WHERE seller_account_id = $1 AND order_id = ANY($2::bigint[])`,
      [sellerAccountId, orderIds],
    );
    return rows.map(versioned);
  }

  /** Orders awaiting shipment whose ship-by deadline is before `deadlineBefore`, soonest first. */
  async atRisk(
    db: Queryable,
    sellerAccountId: number,
    deadlineBefore: number,
    limit: number,
  ): Promise<{ orders: Order[]; total: number }> {
    return this.page(
      db,
      `seller_account_id = $1 AND status = 'awaiting_shipment' AND ship_by_ms <= $2`,
      'ship_by_ms ASC, order_id ASC',
      [sellerAccountId, deadlineBefore],
      limit,
    );
  }

  /** The seller's disputed orders, latest report first. */
  async issuesReported(
    db: Queryable,
    sellerAccountId: number,
    limit: number,
  ): Promise<{ orders: Order[]; total: number }> {
    return this.page(
      db,
      `seller_account_id = $1 AND status = 'issue_reported'`,
      'issue_reported_at_ms DESC, order_id DESC',
      [sellerAccountId],
      limit,
    );
  }

  /** Delivered orders whose inspection deadline passed by `now`, oldest deadline first. */
  async dueForCompletion(db: Queryable, now: number, limit: number): Promise<number[]> {
    const { rows } = await db.query<{ order_id: string }>(
      `SELECT order_id FROM ${this.table} WHERE status = 'delivered' AND inspection_deadline_ms <= $1
       ORDER BY inspection_deadline_ms LIMIT $2`,
      [now, limit],
    );
    return rows.map((row) => Number(row.order_id));
  }

  /**
   * A page of orders matching `filter`, newest (highest id) first, after the cursor (the last id of the
   * previous page). One more row than asked tells whether a next page exists.
   */
  async list(
    db: Queryable,
    filter: {
      readonly buyerAccountId?: number | undefined;
      readonly sellerAccountId?: number | undefined;
      readonly statuses?: readonly string[] | undefined;
      readonly disputed?: boolean | undefined;
    },
    page: { readonly limit: number; readonly beforeOrderId?: number | undefined },
  ): Promise<{ orders: Order[]; nextBeforeOrderId: number | undefined }> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: (n: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filter.buyerAccountId !== undefined) add((n) => `buyer_account_id = ${n}`, filter.buyerAccountId);
    if (filter.sellerAccountId !== undefined) add((n) => `seller_account_id = ${n}`, filter.sellerAccountId);
    if (filter.statuses !== undefined) add((n) => `status = ANY(${n}::text[])`, filter.statuses);
    if (filter.disputed === true) where.push('issue_reported_at_ms IS NOT NULL');
    if (page.beforeOrderId !== undefined) add((n) => `order_id < ${n}`, page.beforeOrderId);
    params.push(page.limit + 1);
    const { rows } = await db.query<OrderRow>(
      `SELECT state, version FROM ${this.table}
        ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY order_id DESC LIMIT $${params.length}`,
      params,
    );
    const orders = rows.slice(0, page.limit).map((row) => row.state);
    return {
      orders,
      nextBeforeOrderId: rows.length > page.limit ? orders[orders.length - 1]?.orderId : undefined,
    };
  }

  /** The seller's orders awaiting shipment placed since `sinceMs`, newest first. */
  async placedSince(
    db: Queryable,
    sellerAccountId: number,
    sinceMs: number,
    limit: number,
  ): Promise<{ orders: Order[]; total: number }> {
    return this.page(
      db,
      `seller_account_id = $1 AND status = 'awaiting_shipment' AND placed_at_ms >= $2`,
      'placed_at_ms DESC, order_id DESC',
      [sellerAccountId, sinceMs],
      limit,
    );
  }

  async countPlacedSince(db: Queryable, sinceMs: number): Promise<number> {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${this.table} WHERE placed_at_ms >= $1`,
      [sinceMs],
    );
    return Number(rows[0]?.n ?? 0);
  }

  private async page(
    db: Queryable,
    where: string,
    orderBy: string,
    params: readonly unknown[],
    limit: number,
  ): Promise<{ orders: Order[]; total: number }> {
    const { rows } = await db.query<OrderRow & { total: string }>(
      `SELECT state, version, count(*) OVER () AS total FROM ${this.table} WHERE ${where}
       ORDER BY ${orderBy} LIMIT ${Number(limit)}`,
      params,
    );
    return { orders: rows.map((row) => row.state), total: Number(rows[0]?.total ?? 0) };
  }
}
