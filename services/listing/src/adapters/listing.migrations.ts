import type { Migration } from '@marketplace/database';
import {
  eventStoreMigrations,
  idempotencyKeysMigration,
  projectionMigrations,
} from '@marketplace/eventsourcing';
import { outgoingMailMigration } from '@marketplace/outgoing-mail';
import {
  imageLibraryAddedAtMigration,
  imageLibraryMigration,
  imageLibraryRecentMigration,
} from './image-library.table.js';
import { bulkUpsertAnswersMigration } from './bulk-upsert-answers.table.js';
import { sellerListingsFromEventsMigration, sellerListingsMigration } from './seller-listings.table.js';
import { productNumberSequenceMigration } from './product-number.sequence.js';
import { stalenessMailQueueMigration, stalenessMigration } from './staleness.tables.js';

/**
 * Everything the listing schema holds: the event store (also the outbox), the product number sequence, the image
 * library, the staleness projections, the idempotency keys of created listings, the outgoing-mail queue of
 * the staleness reminders, the sellers' own lists of their listings and the answers of keyed bulk upserts.
 */
export const listingMigrations: readonly Migration[] = [
  ...eventStoreMigrations,
  productNumberSequenceMigration,
  imageLibraryMigration,
  ...projectionMigrations,
  stalenessMigration,
  imageLibraryRecentMigration,
  idempotencyKeysMigration,
  imageLibraryAddedAtMigration,
  outgoingMailMigration,
  stalenessMailQueueMigration,
  sellerListingsMigration,
  sellerListingsFromEventsMigration,
  bulkUpsertAnswersMigration,
];
