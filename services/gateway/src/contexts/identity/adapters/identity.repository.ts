import type { Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import { toIso } from '@marketplace/platform';
import type { AccountContact, AccountDraft, AccountRole } from '../../../edge/account.js';
import type { AgentTokenSession, IdentityStore, NewApiKey, StoredApiKey } from '../identity.ports.js';

/** SQL for accounts, API keys and agent token sessions. Every method takes the connection or transaction to run on. */
export class IdentityRepository implements IdentityStore {
  private readonly accounts: string;
  private readonly apiKeys: string;
  /** The LISTEN channel of revocations: `<schema>_api_key_revoked`, the payload a key prefix. */
  readonly revokedKeysChannel: string;
  private readonly agentTokenSessions: string;

  constructor(schema: string) {
    const quoted = quoteIdent(schema);
    this.revokedKeysChannel = `${schema}_api_key_revoked`;
    this.accounts = `${quoted}.accounts`;
    this.apiKeys = `${quoted}.api_keys`;
    this.agentTokenSessions = `${quoted}.agent_token_sessions`;
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

  /**
   * Records the session of a new agent token and the key it was traded for; the same statement forgets that
   * key's sessions that expired, so the table holds about one hour of tokens.
   */
  async insertAgentTokenSession(q: Queryable, session: AgentTokenSession, nowMs: number): Promise<void> {
    await q.query(
      `WITH expired AS (
         DELETE FROM ${this.agentTokenSessions} WHERE api_key_prefix = $2 AND expires_at <= $4::timestamptz
       )
       INSERT INTO ${this.agentTokenSessions} (session_id, api_key_prefix, expires_at)
       VALUES ($1, $2, $3::timestamptz)`,
      [session.sessionId, session.apiKeyPrefix, toIso(session.expiresAtMs), toIso(nowMs)],
    );
  }

  /** The role of the account whose unrevoked key issued this token session; undefined otherwise. */
  async roleOfAgentTokenSession(
    q: Queryable,
    sessionId: string,
    accountId: number,
  ): Promise<{ readonly role: AccountRole; readonly apiKeyPrefix: string } | undefined> {
    const { rows } = await q.query<{ role: AccountRole; api_key_prefix: string }>(
      `SELECT a.role, s.api_key_prefix
         FROM ${this.agentTokenSessions} s
         JOIN ${this.apiKeys} k ON k.prefix = s.api_key_prefix
         JOIN ${this.accounts} a ON a.id = k.account_id
        WHERE s.session_id = $1 AND k.account_id = $2 AND k.revoked_at IS NULL`,
      [sessionId, accountId],
    );
    const row = rows[0];
    return row && { role: row.role, apiKeyPrefix: row.api_key_prefix };
  }

  /** Cheap probe that the tables exist and the database answers; used by readiness. */
  async probe(q: Queryable): Promise<void> {
    await q.query(`SELECT 1 FROM ${this.apiKeys} LIMIT 0`);
  }
}
