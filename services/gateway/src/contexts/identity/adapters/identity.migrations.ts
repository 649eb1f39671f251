import type { Migration } from '@marketplace/database';
import { eventStoreMigrations } from '@marketplace/eventsourcing';

/**
 * The gateway's own schema (`identity` in production, a fresh one per test file). Account ids come from the
 * identity column's sequence; keys are found by their clear lookup prefix and checked against their hash.
 * The event store (also the outbox) carries the account events other services project. Agent token sessions
 * tie each token to the key it was issued for.
 */
export const IDENTITY_MIGRATIONS: readonly Migration[] = [
  {
    id: '001-accounts-and-api-keys',
    sql: (schema) => `
      CREATE TABLE ${schema}.accounts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        role text NOT NULL CHECK (role IN ('seller', 'buyer')),
        name text NOT NULL,
        email text NOT NULL,
        company text,
        country char(2),
        created_at timestamptz NOT NULL
      );
      CREATE TABLE ${schema}.api_keys (
        prefix text PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES ${schema}.accounts (id),
        key_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_account_id ON ${schema}.api_keys (account_id);
    `,
  },
  ...eventStoreMigrations,
  {
    // Which key each agent token was traded for, so that revoking the key ends its tokens at once.
    id: '002-agent-token-sessions',
    sql: (schema) => `
      CREATE TABLE ${schema}.agent_token_sessions (
        session_id text PRIMARY KEY,
        api_key_prefix text NOT NULL REFERENCES ${schema}.api_keys (prefix),
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX agent_token_sessions_api_key_prefix ON ${schema}.agent_token_sessions (api_key_prefix);
    `,
  },
];
