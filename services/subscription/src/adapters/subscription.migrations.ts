import { outgoingMailMigration } from '@marketplace/outgoing-mail';
import { sellerWebhooksMigration } from './seller-webhooks.table.js';
import type { Migration } from '@marketplace/database';
import { eventStoreMigrations, projectionMigrations } from '@marketplace/eventsourcing';

/**
 * The subscription schema besides the event store (also the outbox) and the applied-events record:
 * - `subscriptions`: the live subscriptions, written in the transaction that appends their events; the
 *   matcher's index is `(category_key, condition_key, max_price_cents)` ('*' stands for "any"), so a listing
 *   reads only the subscriptions its category, condition and price can satisfy;
 * - `sellers`: each seller's country, projected from `marketplace.account.v1` for `sellerCountry`;
 * - `matches`: one row per (subscription, listing) ever matched: the primary key is the at-most-once guarantee;
 * - `resource_matches`: the last 100 matches of each subscription with an `mcp_resource` channel;
 * - `deliveries`: the durable delivery queue of webhook and email notifications, claimed with SKIP LOCKED.
 */
export const subscriptionTablesMigration: Migration = {
  id: 'subscription-001-tables',
  sql: (schema) => `
    CREATE TABLE ${schema}.subscriptions (
      subscription_id text PRIMARY KEY,
      owner_account_id bigint,
      query jsonb NOT NULL,
      channels jsonb NOT NULL,
      created_at_ms bigint NOT NULL,
      deleted_at_ms bigint,
      category_key text NOT NULL,
      condition_key text NOT NULL,
      min_price_cents bigint NOT NULL,
      max_price_cents bigint NOT NULL
    );
    CREATE INDEX subscriptions_match ON ${schema}.subscriptions (category_key, condition_key, max_price_cents)
      WHERE deleted_at_ms IS NULL;
    CREATE INDEX subscriptions_owner ON ${schema}.subscriptions (owner_account_id, created_at_ms)
      WHERE deleted_at_ms IS NULL;
    CREATE TABLE ${schema}.sellers (
      account_id bigint PRIMARY KEY,
      country text NOT NULL,
      version bigint NOT NULL
    );
    CREATE TABLE ${schema}.matches (
      subscription_id text NOT NULL,
      product_id text NOT NULL,
      matched_at_ms bigint NOT NULL,
      PRIMARY KEY (subscription_id, product_id)
    );
    CREATE TABLE ${schema}.resource_matches (
      subscription_id text NOT NULL,
      product_id text NOT NULL,
      matched_at_ms bigint NOT NULL,
      product jsonb NOT NULL,
      PRIMARY KEY (subscription_id, product_id)
    );
    CREATE INDEX resource_matches_recent ON ${schema}.resource_matches (subscription_id, matched_at_ms DESC);
    CREATE TABLE ${schema}.deliveries (
      delivery_id text PRIMARY KEY,
      subscription_id text NOT NULL,
      product_id text NOT NULL,
      channel_index int NOT NULL,
      channel_type text NOT NULL,
      target text NOT NULL,
      body text NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      attempts int NOT NULL DEFAULT 0,
      next_attempt_at_ms bigint,
      last_attempt_at_ms bigint,
      last_error text,
      created_at_ms bigint NOT NULL,
      delivered_at_ms bigint,
      UNIQUE (subscription_id, product_id, channel_index)
    );
    CREATE INDEX deliveries_due ON ${schema}.deliveries (next_attempt_at_ms) WHERE status = 'pending';
    CREATE INDEX deliveries_recent ON ${schema}.deliveries (subscription_id, created_at_ms DESC);
  `,
};

/** Which webhook secret generation signs, and until when the previous one signs too (WebhookSecretRotated). */
export const webhookSecretGenerationMigration: Migration = {
  id: 'subscription-002-webhook-secret-generation',
  sql: (schema) => `
    ALTER TABLE ${schema}.subscriptions
      ADD COLUMN secret_generation int NOT NULL DEFAULT 0,
      ADD COLUMN previous_secret_valid_until_ms bigint;
  `,
};

/**
 * Confirmed mailboxes (double opt-in): written with EmailAddressConfirmed, read by the matcher, which emails
 * matches to confirmed mailboxes only, and by the answers, which show the others as pending confirmation.
 */
export const confirmedMailboxesMigration: Migration = {
  id: 'subscription-003-confirmed-mailboxes',
  sql: (schema) => `
    CREATE TABLE ${schema}.confirmed_mailboxes (
      mailbox text PRIMARY KEY,
      confirmed_at_ms bigint NOT NULL
    );
  `,
};

export const subscriptionMigrations: readonly Migration[] = [
  ...eventStoreMigrations,
  ...projectionMigrations,
  subscriptionTablesMigration,
  webhookSecretGenerationMigration,
  sellerWebhooksMigration,
  outgoingMailMigration,
  confirmedMailboxesMigration,
];
