import type { Migration } from '@marketplace/database';
import { eventStoreMigrations } from '@marketplace/eventsourcing';
import { productNumberSequenceMigration } from './product-number.sequence.js';

/** Everything the listing schema holds: the event store (also the outbox) and the product number sequence. */
export const listingMigrations: readonly Migration[] = [
  ...eventStoreMigrations,
  productNumberSequenceMigration,
];
