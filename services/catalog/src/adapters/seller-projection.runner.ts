import type { Database } from '@marketplace/database';
import type { EventLog } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import type { Logger } from '@marketplace/platform';
import type { AccountFact } from '../domain/seller-profile.js';
import { decodeAccountEvent } from './account-event.decoder.js';
import type { GenerationalProjection } from './projection-generation.js';
import { startGenerationalProjection } from './projection-generation.js';
import { sellersTable } from './sellers.table.js';

export const ACCOUNT_TOPIC = 'marketplace.account.v1';
/** The consumer group of the first generation; a rebuild moves to `<this>-g<n>` (projection-generation.ts). */
export const SELLER_PROJECTION = 'catalog-seller-projection';

/**
 * Projects sellers' account events into the catalog's `sellers` table, so product details name the seller
 * without asking the gateway's identity schema. Exactly once in effect (`startProjection` records each event
 * id in the transaction that applies it) and versioned, so an older event never overwrites a newer profile.
 * `rebuild()` empties the table and replays the account topic from its beginning.
 */
export const startSellerProjection = (options: {
  readonly db: Database;
  readonly log: EventLog;
  readonly schema: string;
  readonly logger: Logger;
}): Promise<GenerationalProjection> => {
  const sellers = sellersTable(options.schema);
  return startGenerationalProjection({
    db: options.db,
    schema: options.schema,
    name: SELLER_PROJECTION,
    log: options.log,
    topic: ACCOUNT_TOPIC,
    logger: options.logger,
    consume: (group) =>
      startProjection<AccountFact | undefined>({
        log: options.log,
        db: options.db,
        schema: options.schema,
        topic: ACCOUNT_TOPIC,
        group,
        decode: (message) => decodeAccountEvent(message.value),
        apply: async (tx, fact) => {
          if (fact !== undefined) await sellers.save(tx, fact.profile);
        },
      }),
    reset: (tx) => sellers.deleteAll(tx),
  });
};
