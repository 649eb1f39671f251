import type { Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import { toIso } from '@marketplace/platform';
import type { AccountContact, AccountDraft, AccountRole } from '../domain/account.js';

export interface StoredApiKey {
  readonly accountId: number;
  readonly role: AccountRole;
  readonly keyHash: string;
}

export interface NewApiKey {
  readonly prefix: string;
  readonly hash: string;
  readonly accountId: number;
  readonly createdAtMs: number;
}

/** SQL for accounts and API keys. Every method takes the connection or transaction to run on. */
export class IdentityRepository {
  private readonly accounts: string;
  private readonly apiKeys: string;
  /** The LISTEN channel of revocations: `<schema>_api_key_revoked`, the payload a key prefix. */
  readonly revokedKeysChannel: string;

  constructor(schema: string) {
    const quoted = quoteIdent(schema);
    this.revokedKeysChannel = `${schema}_api_key_revoked`;
    this.accounts = `${quoted}.accounts`;
    this.apiKeys = `${quoted}.api_keys`;
  }

  async insertAccount(q: Queryable, draft: AccountDraft, createdAtMs: number): Promise<number> {
    const { rows } = await q.query<{ id: unknown }>(
      `INSERT INTO ${this.accounts} (role, name, email, company, country, created_at)
       VALUES ($1, $2, $3, $4, $5, $6::timestamptz) RETURNING id`,
      [draft.role, draft.name, draft.email, draft.company ?? null, draft.country ?? null, toIso(createdAtMs)],
    );
    return Number(rows[0]?.id);
  }

  async roleOf(q: Queryable, accountId: number): Promise<AccountRole | undefined> {
    const { rows } = await q.query<{ role: AccountRole }>(`SELECT role FROM ${this.accounts} WHERE id = $1`, [
      accountId,
    ]);
    return rows[0]?.role;
  }

  /** The contact details an account was opened with (verified by the operator who opened it). */
  async contactOf(q: Queryable, accountId: number): Promise<AccountContact | undefined> {
    const { rows } = await q.query<{ email: string; name: string; company: string | null }>(
      `SELECT email, name, company FROM ${this.accounts} WHERE id = $1`,
      [accountId],
    );
    const row = rows[0];
    return row && { email: row.email, name: row.name, company: row.company ?? undefined };
  }

  /** False when the prefix is taken (40 random bits: rare, and the caller draws another key). */
  async insertApiKey(q: Queryable, key: NewApiKey): Promise<boolean> {
    const { rowCount } = await q.query(
      `INSERT INTO ${this.apiKeys} (prefix, account_id, key_hash, created_at)
       VALUES ($1, $2, $3, $4::timestamptz) ON CONFLICT (prefix) DO NOTHING`,
      [key.prefix, key.accountId, key.hash, toIso(key.createdAtMs)],
    );
    return rowCount === 1;
  }

  async findActiveKey(q: Queryable, prefix: string): Promise<StoredApiKey | undefined> {
    const { rows } = await q.query<{ account_id: unknown; role: AccountRole; key_hash: string }>(
      `SELECT k.account_id, a.role, k.key_hash
         FROM ${this.apiKeys} k JOIN ${this.accounts} a ON a.id = k.account_id
        WHERE k.prefix = $1 AND k.revoked_at IS NULL`,
      [prefix],
    );
    const row = rows[0];
    return row && { accountId: Number(row.account_id), role: row.role, keyHash: row.key_hash };
  }

  /**
   * Marks the key revoked (keeping the first revocation time) and notifies `revokedKeysChannel` with its prefix
   * when the statement commits, so every gateway forgets its cached copy; false when no key has this prefix.
   */
  async revokeKey(q: Queryable, prefix: string, revokedAtMs: number): Promise<boolean> {
    const { rowCount } = await q.query(
      `WITH revoked AS (
         UPDATE ${this.apiKeys} SET revoked_at = COALESCE(revoked_at, $2::timestamptz) WHERE prefix = $1
         RETURNING prefix)
       SELECT pg_notify($3, prefix) FROM revoked`,
      [prefix, toIso(revokedAtMs), this.revokedKeysChannel],
    );
    return rowCount === 1;
  }

  /** Cheap probe that the tables exist and the database answers; used by readiness. */
  async probe(q: Queryable): Promise<void> {
    await q.query(`SELECT 1 FROM ${this.apiKeys} LIMIT 0`);
  }
}
