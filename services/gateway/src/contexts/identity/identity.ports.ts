import type { Queryable } from '@marketplace/database';
import type { AccountContact, AccountDraft, AccountRole } from '../../edge/account.js';

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

export interface AgentTokenSession {
  readonly sessionId: string;
  readonly apiKeyPrefix: string;
  readonly expiresAtMs: number;
}

/** Accounts, API keys and agent token sessions as stored; every method runs on the connection it is given. */
export interface IdentityStore {
  /** The LISTEN channel of revocations, the payload a key prefix. */
  readonly revokedKeysChannel: string;
  insertAccount(q: Queryable, draft: AccountDraft, createdAtMs: number): Promise<number>;
  roleOf(q: Queryable, accountId: number): Promise<AccountRole | undefined>;
  contactOf(q: Queryable, accountId: number): Promise<AccountContact | undefined>;
  /** False when the prefix is taken. */
  insertApiKey(q: Queryable, key: NewApiKey): Promise<boolean>;
  findActiveKey(q: Queryable, prefix: string): Promise<StoredApiKey | undefined>;
  /** False when no unrevoked key has this prefix. */
  revokeKey(q: Queryable, prefix: string, revokedAtMs: number): Promise<boolean>;
  insertAgentTokenSession(q: Queryable, session: AgentTokenSession, nowMs: number): Promise<void>;
  /** The role of the token's account and the prefix of the key it was issued for, while that key is active. */
  roleOfAgentTokenSession(
    q: Queryable,
    sessionId: string,
    accountId: number,
  ): Promise<{ readonly role: AccountRole; readonly apiKeyPrefix: string } | undefined>;
  probe(q: Queryable): Promise<void>;
}
