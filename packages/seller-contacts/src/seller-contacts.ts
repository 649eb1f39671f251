import type { Database, Migration, Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { EventLog, LogConsumer } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import { accountV1 } from '@marketplace/proto';

export const ACCOUNT_TOPIC = 'marketplace.account.v1';

/**
 * `<schema>.seller_contacts`, one row per seller account. `if not exists`: the listing schema created the same
 * table in its own migration before this package existed.
 */
export const sellerContactsMigration: Migration = {
  id: 'seller-contacts-001',
  sql: (schema) => `
    CREATE TABLE IF NOT EXISTS ${schema}.seller_contacts (
      account_id bigint PRIMARY KEY,
      name text NOT NULL,
      email text NOT NULL
    );
  `,
};

export interface SellerContact {
  readonly accountId: number;
  readonly name: string;
  readonly email: string;
}

export class SellerContactsTable {
  /** The qualified table name, for services that join it in their own queries. */
  readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.seller_contacts`;
  }

  async upsert(q: Queryable, contact: SellerContact): Promise<void> {
    await q.query(
      `INSERT INTO ${this.table} (account_id, name, email) VALUES ($1, $2, $3)
       ON CONFLICT (account_id) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email`,
      [contact.accountId, contact.name, contact.email],
    );
  }

  async find(q: Queryable, accountId: number): Promise<SellerContact | undefined> {
    const { rows } = await q.query<{ name: string; email: string }>(
      `SELECT name, email FROM ${this.table} WHERE account_id = $1`,
      [accountId],
    );
    const row = rows[0];
    return row && { accountId, name: row.name, email: row.email };
  }

  /** The contacts of the sellers among `accountIds` that have one, by account id, in one statement. */
  async findMany(q: Queryable, accountIds: readonly number[]): Promise<Map<number, SellerContact>> {
    if (accountIds.length === 0) return new Map();
    const { rows } = await q.query<{ account_id: string; name: string; email: string }>(
      `SELECT account_id, name, email FROM ${this.table} WHERE account_id = ANY($1::bigint[])`,
      [accountIds],
    );
    return new Map(
      rows.map((row) => {
        const accountId = Number(row.account_id);
        return [accountId, { accountId, name: row.name, email: row.email }];
      }),
    );
  }
}

/**
 * Keeps `seller_contacts` in `schema` up to date from the account events (sellers only), exactly once in effect
 * through `startProjection` (the schema needs `projectionMigrations` too). `group` names the consumer group:
 * each service projects into its own schema under its own group.
 */
export const startSellerContactsProjection = (options: {
  readonly log: EventLog;
  readonly db: Database;
  readonly schema: string;
  readonly group: string;
  readonly table?: SellerContactsTable;
}): Promise<LogConsumer> => {
  const table = options.table ?? new SellerContactsTable(options.schema);
  return startProjection({
    log: options.log,
    db: options.db,
    schema: options.schema,
    topic: ACCOUNT_TOPIC,
    group: options.group,
    decode: (message) => accountV1.AccountEvent.decode(message.value),
    apply: async (tx, event) => {
      if (event.payload?.$case !== 'created' || event.payload.value.role !== 'seller') return;
      const { name, email } = event.payload.value;
      await table.upsert(tx, { accountId: event.accountId, name, email });
    },
  });
};
