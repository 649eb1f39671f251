import { randomBytes } from 'node:crypto';
import type { Database } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';

export const claimKeyMigration = {
  id: 'quote-004-claim-key',
  sql: (schema: string) => `
    CREATE TABLE ${schema}.claim_key (
      id smallint PRIMARY KEY CHECK (id = 1),
      key text NOT NULL
    );
  `,
};

const KEY_BYTES = 32;

/**
 * The key that derives the claim tokens of anonymous quote requests (docs/specification.md, "Quotes"): made once
 * per schema, so every replica and every restart derive the same token for a request, and kept in the service's
 * own schema, beside the requests it protects.
 */
export const loadClaimKey = async (db: Database, schema: string): Promise<Buffer> => {
  const table = `${quoteIdent(schema)}.claim_key`;
  await db.query(`INSERT INTO ${table} (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, [
    randomBytes(KEY_BYTES).toString('base64url'),
  ]);
  const { rows } = await db.query<{ key: string }>(`SELECT key FROM ${table} WHERE id = 1`);
  const key = rows[0]?.key;
  if (key === undefined) throw new Error(`${table} holds no key`);
  return Buffer.from(key, 'base64url');
};
