import type { Queryable, Transaction } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { CheckoutCompletions } from '../application/ports.js';

export const completionsMigration = {
  id: 'order-002-completions',
  sql: (schema: string) => `
    CREATE TABLE ${schema}.checkout_completions (
      checkout_id text PRIMARY KEY,
      attempt integer NOT NULL,
      started_at_ms bigint NOT NULL
    );
    CREATE INDEX checkout_completions_started ON ${schema}.checkout_completions (started_at_ms);
  `,
};

/**
 * Checkout completions in progress: a row from the moment an attempt starts reserving stock until its orders
 * are placed or it failed (both in the transaction of the session's event). A row that stays is an attempt a
 * crash or an outage interrupted; the recovery job finishes it.
 */
export class CompletionsTable implements CheckoutCompletions {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.checkout_completions`;
  }

  async started(tx: Transaction, checkoutId: string, attempt: number, now: number): Promise<void> {
    await tx.query(
      `INSERT INTO ${this.table} (checkout_id, attempt, started_at_ms) VALUES ($1, $2, $3)
       ON CONFLICT (checkout_id) DO UPDATE SET attempt = excluded.attempt, started_at_ms = excluded.started_at_ms`,
      [checkoutId, attempt, now],
    );
  }

  async ended(tx: Transaction, checkoutId: string): Promise<void> {
    await tx.query(`DELETE FROM ${this.table} WHERE checkout_id = $1`, [checkoutId]);
  }

  async startedBefore(db: Queryable, before: number, limit: number): Promise<string[]> {
    const { rows } = await db.query<{ checkout_id: string }>(
      `SELECT checkout_id FROM ${this.table} WHERE started_at_ms < $1 ORDER BY started_at_ms LIMIT $2`,
      [before, limit],
    );
    return rows.map((row) => row.checkout_id);
  }
}
