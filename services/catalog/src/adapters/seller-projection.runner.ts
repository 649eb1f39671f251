import type { Database } from '@marketplace/database';
import type { EventLog, Subscription } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import type { Logger } from '@marketplace/platform';
import type { AccountFact } from '../domain/seller-profile.js';
import { decodeAccountEvent } from './account-event.decoder.js';
import { sellersTable } from './sellers.table.js';

export const ACCOUNT_TOPIC = 'marketplace.account.v1';
export const SELLER_PROJECTION = 'catalog-seller-projection';

/**
 * Projects sellers' account events into the catalog's `sellers` table, so product details name the seller
 * without asking the gateway's identity schema. Exactly once in effect (`startProjection` records each event
 * id in the transaction that applies it) and versioned, so an older event never overwrites a newer profile.
 */
export const startSellerProjection = (options: {
  readonly db: Database;
  readonly log: EventLog;
  readonly schema: string;
  readonly logger: Logger;
}): Promise<Subscription> => {
  const sellers = sellersTable(options.schema);
  return startProjection<AccountFact | undefined>({
    log: options.log,
    db: options.db,
    schema: options.schema,
    topic: ACCOUNT_TOPIC,
    group: SELLER_PROJECTION,
    decode: (message) => decodeAccountEvent(message.value),
    apply: async (tx, fact) => {
      if (fact !== undefined) await sellers.save(tx, fact.profile);
    },
  });
};
