import type { Database, Queryable } from '@marketplace/database';
import { createPostgresEventStore } from '@marketplace/eventsourcing';
import type { Clock } from '@marketplace/platform';
import { forbidden, notFound, unauthenticated } from '@marketplace/platform';
import type { AccountContact, AccountDraft, IssuedKey, Principal } from '../../edge/account.js';
import type { AccountCreated } from './domain/account.events.js';
import { ACCOUNT_STREAM_TYPE, accountStreamId } from './domain/account.events.js';
import type { RandomSource } from './domain/api-key.js';
import { apiKeyMatches, apiKeyPrefixOf, generateApiKey, isApiKeyPrefix } from './domain/api-key.js';
import { ActiveKeyCache } from './active-key.cache.js';
import type { IdentityStore, StoredApiKey } from './identity.ports.js';
import type { AgentTokenRejection, IssuedAgentToken } from './domain/agent-token.js';
import { issueAgentToken, verifyAgentToken } from './domain/agent-token.js';

/** Accounts and API keys: what the admin API, the CLI and authentication need. */
export interface IdentityService {
  /** Opens an account, issues its first key and appends AccountCreated (to the outbox), in one transaction. */
  createAccount(draft: AccountDraft): Promise<IssuedKey>;
  /** Issues one more key to an existing account; not_found when there is no such account. */
  issueApiKey(accountId: number): Promise<IssuedKey>;
  /** Revokes a key by its prefix, at once; revoking twice is harmless; not_found for an unknown prefix. */
  revokeApiKey(prefix: string): Promise<void>;
  /** The principal behind a presented key; unauthenticated for anything but a known, unrevoked key. */
  authenticate(presentedKey: string): Promise<Principal>;
  /** A signed agent token for a buyer who authenticated with an API key; forbidden for anyone else. */
  issueAgentToken(principal: Principal): Promise<IssuedAgentToken>;
  /**
   * The buyer behind a presented agent token; unauthenticated when it is malformed, tampered with, expired,
   * issued for a key revoked since, or names no buyer account.
   */
  authenticateAgentToken(presentedToken: string): Promise<Principal>;
  /** The account's own contact details; not_found when there is no such account. */
  contactOf(accountId: number): Promise<AccountContact>;
  /** Throws unless the identity tables exist and the database answers. */
  probe(): Promise<void>;
  /**
   * With `keyCache` or `onKeyRevoked`: listens for revocations (from any gateway or the CLI), so cached keys are
   * forgotten, and sessions ended, within the notification delay. Call once before serving; without either there
   * is nothing to listen for.
   */
  start(): Promise<void>;
  /** Stops listening. */
  stop(): Promise<void>;
}

export interface IdentityServiceOptions {
  readonly db: Database;
  /** Unquoted schema name: `identity` in production, a fresh one per test file. */
  readonly schema: string;
  /** The accounts and keys of that schema. */
  readonly repository: IdentityStore;
  readonly clock: Clock;
  readonly random?: RandomSource;
  /** Signs and verifies agent tokens (AGENT_TOKEN_SECRET). */
  readonly agentTokenSecret: string;
  /**
   * Keep active keys in memory for `ttlMs` (the gateway's; docs/security.md): authentication then needs no round
   * trip, and a revocation reaches the cache by LISTEN/NOTIFY, the expiry bounding a lost notification. Absent:
   * every authentication reads the table (the CLI, which authenticates nobody).
   */
  readonly keyCache?: { readonly ttlMs: number };
  /**
   * Told the prefix of every key revoked, here or by any other gateway or the CLI (within the notification
   * delay): the gateway ends the MCP sessions opened with that key or its agent tokens (docs/security.md).
   */
  readonly onKeyRevoked?: (prefix: string) => void;
}

const TOKEN_REJECTIONS: Record<AgentTokenRejection, string> = {
  malformed: 'is not <sessionId>.<expiresMs>.<buyerUserId>.<signature>',
  bad_signature: 'has an invalid signature',
  expired: 'has expired; ask POST /api/agent-tokens for a new one',
  expiry_too_far: 'expires later than an agent token can (one hour after issue)',
};

/** Prefixes are 40 random bits; a few draws make a clash practically impossible. */
const MAX_PREFIX_DRAWS = 5;

export const createIdentityService = ({
  db,
  schema,
  repository,
  clock,
  random,
  agentTokenSecret,
  keyCache,
  onKeyRevoked,
}: IdentityServiceOptions): IdentityService => {
  const store = createPostgresEventStore({ db, schema });
  const cache = keyCache === undefined ? undefined : new ActiveKeyCache(keyCache.ttlMs);
  let unlisten: (() => Promise<void>) | undefined;
  const keyRevoked = (prefix: string): void => {
    cache?.forget(prefix);
    onKeyRevoked?.(prefix);
  };

  const findActiveKey = async (prefix: string): Promise<StoredApiKey | undefined> => {
    const now = clock.now();
    const cached = cache?.find(prefix, now);
    if (cached !== undefined) return cached;
    const epoch = cache?.epoch ?? 0;
    const stored = await repository.findActiveKey(db, prefix);
    if (stored !== undefined) cache?.remember(prefix, stored, now, epoch);
    return stored;
  };

  const issueTo = async (q: Queryable, accountId: number, role: IssuedKey['role']): Promise<IssuedKey> => {
    for (let draw = 0; draw < MAX_PREFIX_DRAWS; draw++) {
      const generated = generateApiKey(random);
      const stored = await repository.insertApiKey(q, {
        prefix: generated.prefix,
        hash: generated.hash,
        accountId,
        createdAtMs: clock.now(),
      });
      if (stored) return { accountId, role, apiKey: generated.key, apiKeyPrefix: generated.prefix };
    }
    throw new Error(`no free API key prefix after ${MAX_PREFIX_DRAWS} draws`);
  };

  return {
    createAccount: (draft) =>
      db.transaction(async (tx) => {
        const now = clock.now();
        const accountId = await repository.insertAccount(tx, draft, now);
        await store.append<AccountCreated>(
          {
            streamId: accountStreamId(accountId),
            streamType: ACCOUNT_STREAM_TYPE,
            expectedVersion: 'no_stream',
            events: [{ type: 'AccountCreated', data: { ...draft, accountId } }],
            metadata: { actor: { kind: 'admin', id: '' } },
            now,
          },
          tx,
        );
        return issueTo(tx, accountId, draft.role);
      }),

    issueApiKey: (accountId) =>
      db.transaction(async (tx) => {
        const role = await repository.roleOf(tx, accountId);
        if (!role) throw notFound(`account ${accountId} does not exist`);
        return issueTo(tx, accountId, role);
      }),

    revokeApiKey: async (prefix) => {
      const revoked = isApiKeyPrefix(prefix) && (await repository.revokeKey(db, prefix, clock.now()));
      if (!revoked) throw notFound('no API key has this prefix');
      // At once here; other gateways hear it from the notification.
      keyRevoked(prefix);
    },

    authenticate: async (presentedKey) => {
      const prefix = apiKeyPrefixOf(presentedKey);
      const stored = prefix === undefined ? undefined : await findActiveKey(prefix);
      if (!prefix || !stored || !apiKeyMatches(presentedKey, stored.keyHash)) {
        throw unauthenticated('the X-MCP-API-Key header does not carry a valid API key');
      }
      return {
        accountId: stored.accountId,
        role: stored.role,
        credential: { kind: 'api_key', keyPrefix: prefix },
      };
    },

    issueAgentToken: async (principal) => {
      if (principal.credential.kind !== 'api_key') {
        throw forbidden('an agent token is issued for a buyer API key, not for another agent token');
      }
      if (principal.role !== 'buyer') throw forbidden('agent tokens are for buyer accounts');
      const now = clock.now();
      const issued = issueAgentToken(agentTokenSecret, principal.accountId, now, { random });
      const { sessionId, expiresAtMs } = issued;
      const apiKeyPrefix = principal.credential.keyPrefix;
      await repository.insertAgentTokenSession(db, { sessionId, apiKeyPrefix, expiresAtMs }, now);
      return issued;
    },

    authenticateAgentToken: async (presentedToken) => {
      const verified = verifyAgentToken(agentTokenSecret, presentedToken, clock.now());
      const session = verified.ok
        ? await repository.roleOfAgentTokenSession(
            db,
            verified.claims.sessionId,
            verified.claims.buyerAccountId,
          )
        : undefined;
      if (!verified.ok || session?.role !== 'buyer') {
        const why = verified.ok
          ? 'was issued for an API key that is revoked, or for no buyer account'
          : TOKEN_REJECTIONS[verified.rejection];
        throw unauthenticated(`the X-Agent-Token header does not carry a valid agent token: it ${why}`);
      }
      const { buyerAccountId, sessionId } = verified.claims;
      return {
        accountId: buyerAccountId,
        role: session.role,
        credential: { kind: 'agent_token', sessionId, apiKeyPrefix: session.apiKeyPrefix },
      };
    },

    contactOf: async (accountId) => {
      const contact = await repository.contactOf(db, accountId);
      if (!contact) throw notFound(`account ${accountId} does not exist`);
      return contact;
    },

    probe: () => repository.probe(db),

    start: async () => {
      if ((cache === undefined && onKeyRevoked === undefined) || unlisten !== undefined) return;
      unlisten = await db.listen(repository.revokedKeysChannel, keyRevoked);
    },

    stop: async () => {
      await unlisten?.();
      unlisten = undefined;
    },
  };
};
