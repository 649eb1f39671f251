import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import type { EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import { ManualClock, createLogger } from '@marketplace/platform';
import type { CatalogServiceHandle } from '../src/index.js';
import { startCatalogService } from '../src/index.js';
import { eventually } from './support/eventually.js';
import { accountCreated } from './support/account-events.js';
import { listingCreated, listingMessage, SELLER } from './support/listing-events.js';

const logger = createLogger({ service: 'catalog-test', level: 'silent' });
const LISTING_TOPIC = 'marketplace.listing.v1';
const ACCOUNT_TOPIC = 'marketplace.account.v1';

/**
 * A rebuild moves each projection to a new consumer group (docs/operations.md, "Rebuilding a projection"): the
 * embedded log must then keep the new groups' offsets only, not the old ones for ever.
 */
describe.each(testEngines())('catalog rebuild on the embedded event log on $name', ({ create }) => {
  let db: Database;
  let log: EventLog;
  let catalogSchema: string;
  let logSchema: string;
  let service: CatalogServiceHandle | undefined;

  const start = async (): Promise<CatalogServiceHandle> =>
    (service = await startCatalogService({
      db,
      log,
      schema: catalogSchema,
      logger,
      clock: new ManualClock(0),
      grpc: { host: '127.0.0.1', port: 0 },
    }));
  /** The groups the log keeps offsets of, per topic: `<topic> <group>`. */
  const groupsWithOffsets = async (): Promise<string[]> => {
    const { rows } = await db.query<{ row: string }>(
      `select distinct topic || ' ' || group_name as row from ${quoteIdent(logSchema)}.consumer_offsets
       order by 1`,
    );
    return rows.map(({ row }) => row);
  };
  const productCount = async (): Promise<number> =>
    (await db.query<{ n: number }>(`select count(*)::int as n from ${quoteIdent(catalogSchema)}.products`))
      .rows[0]!.n;

  beforeAll(async () => {
    db = await create();
  }, 60_000);
  beforeEach(async () => {
    catalogSchema = freshSchemaName('catalog_rebuild');
    logSchema = freshSchemaName('eventlog_rebuild');
    log = await createEmbeddedEventLog({ db, schema: logSchema, pollIntervalMs: 100 });
    await log.publish(LISTING_TOPIC, [
      listingCreated(listingMessage(1, { name: 'Cordless drills, 40 units' })),
    ]);
    const { key, value, headers } = accountCreated(SELLER, {
      role: 'seller',
      name: 'Tarnwick',
      country: 'GB',
    });
    await log.publish(ACCOUNT_TOPIC, [{ key, value, headers }]);
  });
  afterEach(async () => {
    await service?.stop();
    service = undefined;
    await log.close();
    await dropSchema(db, catalogSchema);
    await dropSchema(db, logSchema);
  });
  afterAll(async () => {
    await db.close();
  });

  it('keeps the offsets of the new consumer groups only, after one rebuild and after another', async () => {
    const handle = await start();
    await eventually(async () => expect(await productCount()).toBe(1));
    expect(await groupsWithOffsets()).toEqual([
      `${ACCOUNT_TOPIC} catalog-seller-projection`,
      `${LISTING_TOPIC} catalog-search-projection`,
    ]);

    await handle.rebuild();

    expect(await groupsWithOffsets()).toEqual([
      `${ACCOUNT_TOPIC} catalog-seller-projection-g2`,
      `${LISTING_TOPIC} catalog-search-projection-g2`,
    ]);
    await eventually(async () => expect(await productCount()).toBe(1));

    await handle.rebuild();

    expect(await groupsWithOffsets()).toEqual([
      `${ACCOUNT_TOPIC} catalog-seller-projection-g3`,
      `${LISTING_TOPIC} catalog-search-projection-g3`,
    ]);
    await eventually(async () => expect(await productCount()).toBe(1));
  });

  it('deletes the old groups on start after a rebuild done by hand, or one cut short before it deleted them', async () => {
    await (await start()).stop();
    service = undefined;
    expect(await groupsWithOffsets()).toHaveLength(2);
    // The manual rebuild of docs/operations.md, with the catalog stopped: a new generation, the old rows kept.
    await db.query(
      `insert into ${quoteIdent(catalogSchema)}.projection_generations (projection, generation)
       values ('catalog-search-projection', 2), ('catalog-seller-projection', 2)
       on conflict (projection) do update set generation = excluded.generation`,
    );
    await db.query(`delete from ${quoteIdent(catalogSchema)}.products`);

    await start();

    await eventually(async () => expect(await productCount()).toBe(1));
    expect(await groupsWithOffsets()).toEqual([
      `${ACCOUNT_TOPIC} catalog-seller-projection-g2`,
      `${LISTING_TOPIC} catalog-search-projection-g2`,
    ]);
  });
});
