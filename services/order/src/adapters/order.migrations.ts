import type { Migration } from '@marketplace/database';
import {
  eventStoreMigrations,
  idempotencyKeysMigration,
  projectionMigrations,
} from '@marketplace/eventsourcing';
import { sellerContactsMigration } from '@marketplace/seller-contacts';
import { outgoingMailMigration } from '@marketplace/outgoing-mail';
import { completionsMigration } from './completions.table.js';
import { quoteRedemptionsMigration } from './quote-redemptions.table.js';
import { disputeMailQueueMigration } from './dispute-notifications.table.js';
import { stockReleasesMigration } from './stock-releases.table.js';

/**
 * The order schema: the event store (also the outbox) of orders and checkout sessions, the order number
 * sequence, the `orders` table (each order's current state, written in the transaction of its events, for the
 * queries by seller, deadline and status), the operator's notices about disputes and the outgoing-mail queue
 * that sends them.
 */
const orderTablesMigration: Migration = {
  id: 'order-001-orders',
  sql: (schema) => `
    CREATE SEQUENCE ${schema}.order_number_seq;
    CREATE TABLE ${schema}.orders (
      order_id bigint PRIMARY KEY,
      seller_account_id bigint NOT NULL,
      buyer_account_id bigint NOT NULL,
      status text NOT NULL,
      placed_at_ms bigint NOT NULL,
      ship_by_ms bigint NOT NULL,
      inspection_deadline_ms bigint,
      issue_reported_at_ms bigint,
      version bigint NOT NULL,
      state jsonb NOT NULL
    );
    CREATE INDEX orders_seller_status_ship_by ON ${schema}.orders (seller_account_id, status, ship_by_ms);
    CREATE INDEX orders_delivered_deadline ON ${schema}.orders (inspection_deadline_ms) WHERE status = 'delivered';
    CREATE INDEX orders_placed_at ON ${schema}.orders (placed_at_ms);
    CREATE TABLE ${schema}.dispute_notifications (
      order_id bigint PRIMARY KEY,
      payload jsonb NOT NULL,
      created_at_ms bigint NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at_ms bigint NOT NULL,
      sent_at_ms bigint
    );
    CREATE INDEX dispute_notifications_unsent ON ${schema}.dispute_notifications (next_attempt_at_ms)
      WHERE sent_at_ms IS NULL;
  `,
};

export const orderMigrations: readonly Migration[] = [
  ...eventStoreMigrations,
  orderTablesMigration,
  completionsMigration,
  idempotencyKeysMigration,
  quoteRedemptionsMigration,
  outgoingMailMigration,
  disputeMailQueueMigration,
  stockReleasesMigration,
  ...projectionMigrations,
  sellerContactsMigration,
];
