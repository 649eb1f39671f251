import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import type { EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import type { Mailer, MailMessage } from '@marketplace/mailer';
import { OutgoingMailTable, startOutgoingMailWorker } from '@marketplace/outgoing-mail';
import { createLogger, ManualClock, type Clock } from '@marketplace/platform';
import { accountV1 } from '@marketplace/proto';
import { encodeListingEvent } from '../src/adapters/listing-event.codec.js';
import { listingMigrations } from '../src/adapters/listing.migrations.js';
import { startStalenessProjections } from '../src/adapters/staleness.projections.js';
import { StalenessTables } from '../src/adapters/staleness.tables.js';
import { runStalenessCheck } from '../src/application/staleness.js';
import type { Listing } from '../src/domain/listing.events.js';

const DAY = 24 * 60 * 60 * 1_000;
const CONFIRMED = Date.UTC(2026, 0, 1);
const logger = createLogger({ service: 'staleness-test', level: 'silent' });

/** A Mailer that records what it was asked to send, and can be told to fail. */
class RecordingMailer implements Mailer {
  readonly sent: (MailMessage & { readonly to: string })[] = [];
  failing = false;
  async send(message: MailMessage): Promise<void> {
    if (this.failing) throw new Error('SMTP server unavailable');
    this.sent.push(message);
  }
  async close(): Promise<void> {}
}

/** One staleness pass, then one pass of the outgoing-mail worker: resolves to the reminders sent. */
const checkAndSend = async (db: Database, schema: string, mailer: Mailer, clock: Clock): Promise<number> => {
  const outgoingMail = new OutgoingMailTable(schema);
  await runStalenessCheck({
    db,
    tables: new StalenessTables(schema),
    outgoingMail,
    clock,
    publicBaseUrl: 'https://market.example',
  });
  const worker = startOutgoingMailWorker({
    db,
    table: outgoingMail,
    mailer,
    clock,
    logger,
    batchSize: 100,
    runLoop: false,
  });
  return worker.processDue();
};

describe.each(testEngines())('staleness job on $name', ({ create }) => {
  let db: Database;
  let schema: string;
  let tables: StalenessTables;
  let mailer: RecordingMailer;
  let clock: ManualClock;
  const check = () => checkAndSend(db, schema, mailer, clock);
  const confirm = (productId: string, confirmedAt: number, version = 1) =>
    tables.recordConfirmations(db, [
      {
        productId,
        sellerAccountId: 7,
        name: 'Office chairs',
        confirmedAt,
        version,
      },
    ]);

  beforeAll(async () => {
    db = await create();
  });

  beforeEach(async () => {
    schema = freshSchemaName('listing_staleness_test');
    await migrate(db, schema, listingMigrations);
    tables = new StalenessTables(schema);
    mailer = new RecordingMailer();
    clock = new ManualClock(CONFIRMED);
    await tables.sellerContacts.upsert(db, { accountId: 7, name: 'Tarnwick', email: 'ops@tarnwick.test' });
  });

  afterAll(async () => {
    await db.close();
  });

  it('emails nothing at day 89, the seller at day 90, and nothing more at day 91 (once per period)', async () => {
    await confirm('product_1', CONFIRMED);
    clock.set(CONFIRMED + 89 * DAY);
    expect(await check()).toBe(0);
    clock.set(CONFIRMED + 90 * DAY);
    expect(await check()).toBe(1);
    clock.set(CONFIRMED + 91 * DAY);
    expect(await check()).toBe(0);
    expect(mailer.sent).toEqual([
      expect.objectContaining({
        to: 'ops@tarnwick.test',
        messageId: `<staleness.product_1.${CONFIRMED}@market.example>`,
        text: expect.stringContaining('https://market.example/api/ucp/catalog/products/product_1'),
      }),
    ]);
    await dropSchema(db, schema);
  });

  it('starts a new period with a new confirmation, and ignores a redelivered older one', async () => {
    await confirm('product_1', CONFIRMED);
    clock.set(CONFIRMED + 90 * DAY);
    expect(await check()).toBe(1);
    const reconfirmed = CONFIRMED + 95 * DAY;
    await confirm('product_1', reconfirmed, 2);
    await confirm('product_1', CONFIRMED, 1);
    clock.set(reconfirmed + 89 * DAY);
    expect(await check()).toBe(0);
    clock.set(reconfirmed + 90 * DAY);
    expect(await check()).toBe(1);
    expect(mailer.sent.map(({ messageId }) => messageId)).toEqual([
      `<staleness.product_1.${CONFIRMED}@market.example>`,
      `<staleness.product_1.${reconfirmed}@market.example>`,
    ]);
    await dropSchema(db, schema);
  });

  it('sends once across replicas racing and across a restart', async () => {
    for (let n = 1; n <= 20; n++) await confirm(`product_${n}`, CONFIRMED);
    clock.set(CONFIRMED + 90 * DAY);
    const [first, second] = await Promise.all([check(), check()]);
    expect((first ?? 0) + (second ?? 0)).toBe(20);
    expect(await check()).toBe(0);
    expect(new Set(mailer.sent.map(({ messageId }) => messageId)).size).toBe(20);
    await dropSchema(db, schema);
  });

  it('retries a failed send after a backoff, with the same Message-ID', async () => {
    await confirm('product_1', CONFIRMED);
    clock.set(CONFIRMED + 90 * DAY);
    mailer.failing = true;
    expect(await check()).toBe(0);
    mailer.failing = false;
    clock.advance(4_000);
    expect(await check()).toBe(0);
    clock.advance(1_000);
    expect(await check()).toBe(1);
    expect(mailer.sent).toHaveLength(1);
    expect(mailer.sent[0]?.messageId).toBe(`<staleness.product_1.${CONFIRMED}@market.example>`);
    await dropSchema(db, schema);
  });

  it('waits for the seller contact when the account event has not arrived yet', async () => {
    await tables.recordConfirmations(db, [
      {
        productId: 'product_9',
        sellerAccountId: 8,
        name: 'Fans',
        confirmedAt: CONFIRMED,
        version: 1,
      },
    ]);
    clock.set(CONFIRMED + 90 * DAY);
    expect(await check()).toBe(0);
    await tables.sellerContacts.upsert(db, { accountId: 8, name: 'Ostrander', email: 'ops@ostrander.test' });
    expect(await check()).toBe(1);
    expect(mailer.sent[0]?.to).toBe('ops@ostrander.test');
    await dropSchema(db, schema);
  });
});

/** A listing as the listing events carry it. */
const LISTING: Listing = {
  productId: 'product_1',
  sellerAccountId: 7,
  name: 'Office chairs',
  description: 'Boxed',
  sku: 'SKU-3',
  category: 'office_supplies',
  priceCents: 100,
  currency: 'USD',
  quantity: 1,
  minOrderQuantity: 1,
  minQuoteQuantity: 1,
  galleryImageUrls: [],
  instantCheckout: false,
  promotePublicly: false,
  createdAt: CONFIRMED,
  updatedAt: CONFIRMED,
  confirmedAt: CONFIRMED,
};

describe.each(testEngines())('staleness projections through the event log on $name', ({ create }) => {
  const schema = freshSchemaName('listing_staleness_projection_test');
  const logSchema = freshSchemaName('eventlog_test');
  let db: Database;
  let log: EventLog;

  beforeAll(async () => {
    db = await create();
    log = await createEmbeddedEventLog({ db, schema: logSchema });
    await migrate(db, schema, listingMigrations);
  });

  afterAll(async () => {
    await log.close();
    await dropSchema(db, schema);
    await dropSchema(db, logSchema);
    await db.close();
  });

  it('projects seller contacts and confirmations, once each although delivered twice', async () => {
    const tables = new StalenessTables(schema);
    const subscriptions = await startStalenessProjections({ log, db, schema, tables });
    const account = accountV1.AccountEvent.encode({
      eventId: '018f0000-0000-7000-8000-000000000001',
      accountId: 7,
      version: 1,
      occurredAtMs: CONFIRMED,
      actor: { kind: 'admin', id: '' },
      correlationId: '',
      payload: {
        $case: 'created',
        value: { role: 'seller', name: 'Tarnwick', email: 'ops@tarnwick.test', company: '', country: '' },
      },
    }).finish();
    const listing: Listing = { ...LISTING, productId: 'product_3' };
    const listingEvent = encodeListingEvent({
      eventId: '018f0000-0000-7000-8000-000000000002',
      streamId: 'product_3',
      streamType: 'listing',
      version: 1,
      type: 'ListingCreated',
      data: { listing },
      metadata: {},
      occurredAt: CONFIRMED,
      globalPosition: '1',
    });
    for (let delivery = 0; delivery < 2; delivery++) {
      await log.publish('marketplace.account.v1', [
        { key: 'account_7', value: account, headers: { ce_id: '018f0000-0000-7000-8000-000000000001' } },
      ]);
      await log.publish('marketplace.listing.v1', [
        {
          key: 'product_3',
          value: listingEvent.value,
          headers: { ce_id: '018f0000-0000-7000-8000-000000000002' },
        },
      ]);
    }
    const clock = new ManualClock(CONFIRMED + 90 * DAY);
    const mailer = new RecordingMailer();
    const deadline = Date.now() + 10_000;
    let sent = 0;
    while (sent === 0 && Date.now() < deadline) {
      sent = await checkAndSend(db, schema, mailer, clock);
      if (sent === 0) await sleep(50);
    }
    expect(mailer.sent).toEqual([expect.objectContaining({ to: 'ops@tarnwick.test' })]);
    const { rows } = await db.query<{ n: number }>(
      `select count(*)::int as n from "${schema}".projection_applied_events`,
    );
    expect(rows[0]?.n).toBe(2);
    await Promise.all(subscriptions.map((subscription) => subscription.close()));
  });

  it("records a batch's confirmations in one statement, each product at its newest version", async () => {
    const recorded: string[] = [];
    const transaction = db.transaction.bind(db);
    db.transaction = (work, options) =>
      transaction((tx) => {
        const query = tx.query.bind(tx);
        tx.query = (sql, params) => {
          if (sql.includes('listing_confirmations')) recorded.push(sql);
          return query(sql, params);
        };
        return work(tx);
      }, options);
    const tables = new StalenessTables(schema);
    const subscriptions = await startStalenessProjections({ log, db, schema, tables });
    try {
      const versions = [1, 2, 3, 4, 5];
      // One publish: the batch holds all five (one key, one partition, one transaction).
      await log.publish(
        'marketplace.listing.v1',
        versions.map((version) => ({
          key: 'product_21',
          value: encodeListingEvent({
            eventId: `018f0000-0000-7000-8000-00000000002${version}`,
            streamId: 'product_21',
            streamType: 'listing',
            version,
            type: 'ListingCreated',
            data: { listing: { ...LISTING, productId: 'product_21', confirmedAt: CONFIRMED + version } },
            metadata: {},
            occurredAt: CONFIRMED,
            globalPosition: String(version),
          }).value,
          headers: { ce_id: `018f0000-0000-7000-8000-00000000002${version}` },
        })),
      );
      const confirmation = async () =>
        (
          await db.query<{ version: string | number; confirmed_at_ms: string | number }>(
            `select version, confirmed_at_ms from "${schema}".listing_confirmations where product_id = 'product_21'`,
          )
        ).rows[0];
      const deadline = Date.now() + 10_000;
      while (Number((await confirmation())?.version ?? 0) < 5 && Date.now() < deadline) await sleep(25);
      expect(Number((await confirmation())?.version)).toBe(5);
      expect(Number((await confirmation())?.confirmed_at_ms)).toBe(CONFIRMED + 5);
      expect(recorded).toHaveLength(1);
    } finally {
      db.transaction = transaction;
      await Promise.all(subscriptions.map((subscription) => subscription.close()));
    }
  });
});
