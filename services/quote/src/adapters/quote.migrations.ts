import type { Migration } from '@marketplace/database';
import {
  eventStoreMigrations,
  idempotencyKeysMigration,
  projectionMigrations,
} from '@marketplace/eventsourcing';
import { outgoingMailMigration } from '@marketplace/outgoing-mail';
import { sellerContactsMigration } from '@marketplace/seller-contacts';
import { claimKeyMigration } from './claim-key.table.js';
import { listingSnapshotShippingMigration, listingSnapshotsMigration } from './listing-snapshots.table.js';
import { quoteRequestIdSequenceMigration } from './quote-id.sequence.js';
import { quoteRequestBuyersMigration, quoteRequestsMigration } from './quote-requests.table.js';

/**
 * Everything the quote schema holds: the event store (also the outbox), the id sequence, the sellers' list of
 * requests, the projections the service reads (listings, seller contacts, and the record of applied events
 * that makes them and the notifications exactly once in effect), the idempotency keys of filed requests, and
 * the queue of outgoing quote emails.
 */
export const quoteMigrations: readonly Migration[] = [
  ...eventStoreMigrations,
  quoteRequestIdSequenceMigration,
  quoteRequestsMigration,
  listingSnapshotsMigration,
  ...projectionMigrations,
  sellerContactsMigration,
  idempotencyKeysMigration,
  claimKeyMigration,
  quoteRequestBuyersMigration,
  outgoingMailMigration,
  listingSnapshotShippingMigration,
];
