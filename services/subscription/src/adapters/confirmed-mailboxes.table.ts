import type { Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { ConfirmedMailboxes } from '../application/ports.js';

/** `confirmed_mailboxes`: one row per mailbox confirmed, written with its EmailAddressConfirmed event. */
export class ConfirmedMailboxesTable implements ConfirmedMailboxes {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.confirmed_mailboxes`;
  }

  async markConfirmed(tx: Queryable, mailbox: string, confirmedAt: number): Promise<void> {
    await tx.query(
      `insert into ${this.table} (mailbox, confirmed_at_ms) values ($1, $2) on conflict (mailbox) do nothing`,
      [mailbox, confirmedAt],
    );
  }

  async confirmedAmong(db: Queryable, mailboxes: readonly string[]): Promise<Set<string>> {
    if (mailboxes.length === 0) return new Set();
    const { rows } = await db.query<{ mailbox: string }>(
      `select mailbox from ${this.table} where mailbox = any($1::text[])`,
      [[...new Set(mailboxes)]],
    );
    return new Set(rows.map((row) => row.mailbox));
  }
}
