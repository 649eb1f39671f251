import type { Database } from '@marketplace/database';
import type { EventLog, LogConsumer } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import { startSellerContactsProjection } from '@marketplace/seller-contacts';
import { decodeListingEvent } from './listing-event.codec.js';
import type { StalenessTables } from './staleness.tables.js';

export const LISTING_TOPIC = 'marketplace.listing.v1';

/** The confirmation time of a withdrawn listing: later than any cutoff. */
const NEVER_DUE = Number.MAX_SAFE_INTEGER;

/**
 * The two projections the staleness job reads: seller contacts from the account events, and each listing's last
 * confirmation from the listing events (this service's own, through the log like any consumer: the job needs no
 * say in how commands are written). Both are idempotent: startProjection deduplicates by event id, and the
 * confirmation keeps the newest version.
 */
export const startStalenessProjections = async (options: {
  readonly log: EventLog;
  readonly db: Database;
  readonly schema: string;
  readonly tables: StalenessTables;
}): Promise<LogConsumer[]> => {
  const { log, db, schema, tables } = options;
  const contacts = await startSellerContactsProjection({
    log,
    db,
    schema,
    group: 'listing-seller-contacts',
    table: tables.sellerContacts,
  });
  try {
    const confirmations = await startProjection({
      log,
      db,
      schema,
      topic: LISTING_TOPIC,
      group: 'listing-staleness',
      decode: (message) => decodeListingEvent(message.value),
      // Every listing event carries the whole listing: a product's last event of a batch is the one to record,
      // and the batch's products are recorded in one statement.
      supersedes: () => true,
      applyBatch: async (tx, events) => {
        await tables.recordConfirmations(
          tx,
          events.map(({ event: decoded }) => {
            const { listing } = decoded.event.data;
            // A withdrawn listing is not on sale: it is never due (relisting records a real confirmation again).
            const confirmedAt = listing.withdrawnAt === undefined ? listing.confirmedAt : NEVER_DUE;
            return { ...listing, confirmedAt, version: decoded.version };
          }),
        );
      },
    });
    return [contacts, confirmations];
  } catch (error) {
    await contacts.close();
    throw error;
  }
};
