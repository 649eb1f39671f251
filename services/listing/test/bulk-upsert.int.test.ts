import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import type { EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import { createEmlMailer } from '@marketplace/mailer';
import type { StallingServer } from '@marketplace/outbound-http/testing';
import { startStallingServer } from '@marketplace/outbound-http/testing';
import type { ServiceHandle } from '@marketplace/platform';
import { AppError, createLogger, ManualClock } from '@marketplace/platform';
import { listingV1 } from '@marketplace/proto';
import { createGrpcClient, type GrpcClient } from '@marketplace/rpc';
import { BULK_UPSERT_LIMITS } from '@marketplace/vocabulary';
import { CREATES_PER_TRANSACTION } from '../src/application/create-listing.js';
import { startListingService } from '../src/index.js';
import { IMAGE_SERVER_ALLOW_LIST, TestImages } from './support/test-images.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const SELLER = 31;
const OTHER_SELLER = 32;
const { BULK_UPSERT_MODE_CREATE: CREATE, BULK_UPSERT_MODE_UPSERT_BY_SKU: UPSERT } = listingV1.BulkUpsertMode;
const S = listingV1.BulkUpsertStatus;
const actorOf = (accountId: number) => ({ kind: 'seller', id: String(accountId) });

/** The image bounds, shortened from 10 s a fetch and 60 s a call so that hanging hosts cost seconds. */
const FETCH_TIMEOUT_MS = 500;
const FETCHES_AT_ONCE = 16;
const CALL_BUDGET_MS = 3_000;
/** What a call may take on top of its image budget: its lookups and writes. */
const WRITES_MS = 6_000;
const TIMED_OUT = 'did not answer within 500 ms';
const BUDGET_SPENT =
  "was not fetched: this call's 3 seconds for fetching images ran out (slow image hosts); send the item again";

/** A sync record as an ERP sends it: every field, so an update replaces them all. */
const record = (index: number, sku: string, overrides: Partial<listingV1.ListingDraft> = {}) => {
  const draft = listingV1.ListingDraft.fromPartial({
    name: `Pallet of chargers ${sku}`,
    description: 'Overstock, boxed',
    sku,
    category: 'electronics',
    priceCents: 1_250,
    quantity: 40,
    promotePublicly: true,
    ...overrides,
  });
  return {
    index,
    draft,
    fields: ['name', 'description', 'sku', 'category', 'priceCents', 'quantity', 'promotePublicly'],
  };
};

/** A record that sends images too (an update replaces them). */
const imaged = (
  index: number,
  sku: string,
  images: Pick<listingV1.ListingDraft, 'imageUrl'> & {
    galleryImageUrls?: string[];
  },
) => {
  const sent = record(index, sku, images);
  return { ...sent, fields: [...sent.fields, ...Object.keys(images)] };
};

describe.each(testEngines())('BulkUpsertListings on $name', ({ create }) => {
  const schema = freshSchemaName('bulk_upsert_test');
  const logSchema = freshSchemaName('eventlog_test');
  let db: Database;
  let log: EventLog;
  let images: TestImages;
  let silent: StallingServer;
  let trickling: StallingServer;
  let service: ServiceHandle;
  let grpc: GrpcClient<listingV1.ListingServiceDefinition>;

  const bulk = (
    request: Partial<listingV1.BulkUpsertListingsRequest>,
    seller = SELLER,
  ): Promise<listingV1.BulkUpsertListingsResponse> =>
    grpc.client.bulkUpsertListings(
      listingV1.BulkUpsertListingsRequest.fromPartial({
        actor: actorOf(seller),
        sellerAccountId: seller,
        mode: UPSERT,
        ...request,
      }),
      { deadline: BULK_UPSERT_LIMITS.callDeadlineMs },
    );
  /** The call's answer and how long it took. */
  const timedBulk = async (request: Partial<listingV1.BulkUpsertListingsRequest>) => {
    const started = performance.now();
    const { outcomes } = await bulk(request);
    return { outcomes, elapsedMs: performance.now() - started };
  };
  const statuses = (response: listingV1.BulkUpsertListingsResponse) =>
    response.outcomes.map((outcome) => outcome.status);
  const eventCount = async (): Promise<number> =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.events`)).rows[0]?.n);
  const listingOf = async (productId: string) =>
    (await grpc.client.getListing({ productId })).listing as listingV1.Listing;

  beforeAll(async () => {
    db = await create();
    images = await TestImages.start();
    silent = await startStallingServer('silent');
    trickling = await startStallingServer('trickle', { trickleIntervalMs: 20 });
    log = await createEmbeddedEventLog({ db, schema: logSchema });
    service = await startListingService({
      db,
      log,
      logger: createLogger({ service: 'bulk-upsert-test' }),
      clock: new ManualClock(NOW),
      grpc: { host: '127.0.0.1', port: 0 },
      schema,
      blobs: images.blobs,
      outboundAllowList: IMAGE_SERVER_ALLOW_LIST,
      imageFetch: {
        timeoutMs: FETCH_TIMEOUT_MS,
        fetchesAtOnce: FETCHES_AT_ONCE,
        callBudgetMs: CALL_BUDGET_MS,
      },
      mailer: createEmlMailer({
        directory: mkdtempSync(join(tmpdir(), 'listing-mail-')),
        from: 't@example.test',
      }),
    });
    grpc = createGrpcClient(listingV1.ListingServiceDefinition, service.address);
  }, 60_000);

  afterAll(async () => {
    grpc?.close();
    await service?.stop();
    await log?.close();
    await silent?.close();
    await trickling?.close();
    await images?.stop();
    await dropSchema(db, schema);
    await dropSchema(db, logSchema);
    await db?.close();
  });

  it('upserts by sku: the first run creates, the same run again is unchanged and writes nothing', async () => {
    const items = [record(0, 'SYNC-1'), record(1, 'SYNC-2', { imageUrl: images.server.imageUrl('charger') })];
    const first = await bulk({ items });
    expect(statuses(first)).toEqual([S.BULK_UPSERT_STATUS_CREATED, S.BULK_UPSERT_STATUS_CREATED]);
    // The image a seller sent teaches the library, in the transaction of its listing; a borrowed one does not.
    const library = await db.query<{ product_id: string; title_words: string[] }>(
      `SELECT product_id, title_words FROM ${schema}.image_library WHERE product_id = ANY($1::text[])`,
      [first.outcomes.map((outcome) => outcome.productId)],
    );
    expect(library.rows).toEqual([
      { product_id: first.outcomes[1]?.productId, title_words: expect.arrayContaining(['chargers']) },
    ]);
    const events = await eventCount();
    const again = await bulk({ items });
    expect(statuses(again)).toEqual([S.BULK_UPSERT_STATUS_UNCHANGED, S.BULK_UPSERT_STATUS_UNCHANGED]);
    expect(again.outcomes.map((outcome) => outcome.productId)).toEqual(
      first.outcomes.map((o) => o.productId),
    );
    expect(await eventCount()).toBe(events);
  });

  it('finds the listing of a sku sent with surrounding spaces (stored trimmed) instead of creating a twin', async () => {
    const [created] = (await bulk({ items: [record(0, 'PAD-1')] })).outcomes;
    const padded = await bulk({ items: [record(0, ' PAD-1 ', { quantity: 7 })] });
    expect(padded.outcomes).toMatchObject([
      { status: S.BULK_UPSERT_STATUS_UPDATED, productId: created?.productId },
    ]);
    expect(await listingOf(created!.productId)).toMatchObject({ sku: 'PAD-1', quantity: 7 });
    const again = await bulk({ items: [record(0, 'PAD-1', { quantity: 8 })] });
    expect(again.outcomes).toMatchObject([
      { status: S.BULK_UPSERT_STATUS_UPDATED, productId: created?.productId },
    ]);
  });

  it('creates each sku once when concurrent upserts race; the losers are sku errors to send again', async () => {
    // More than one group of creates, so the claims span several transactions of each call.
    const items = Array.from({ length: CREATES_PER_TRANSACTION + 20 }, (_, index) =>
      record(index, `CLAIM-${index}`),
    );
    const calls = await Promise.all([1, 2, 3, 4].map(() => bulk({ items })));
    const rows = await db.query<{ sku: string; n: string }>(
      `SELECT sku, count(*)::text AS n FROM ${schema}.seller_listings
        WHERE seller_account_id = $1 AND sku LIKE 'CLAIM-%' GROUP BY sku`,
      [SELLER],
    );
    expect(rows.rows).toHaveLength(items.length);
    expect(rows.rows.every(({ n }) => Number(n) === 1)).toBe(true);
    for (const [index] of items.entries()) {
      const outcomes = calls.map((call) => call.outcomes[index]);
      expect(outcomes.filter((outcome) => outcome?.status === S.BULK_UPSERT_STATUS_CREATED)).toHaveLength(1);
      for (const outcome of outcomes.filter((one) => one?.status === S.BULK_UPSERT_STATUS_ERROR)) {
        expect(outcome?.violations.map(({ field }) => field)).toEqual(['sku']);
      }
    }
    // Sent again, every item updates (or leaves unchanged) the one listing of its sku.
    const again = await bulk({ items });
    expect(new Set(statuses(again))).toEqual(new Set([S.BULK_UPSERT_STATUS_UNCHANGED]));
  });

  it('updates the fields an item sent and keeps the others (PUT semantics), stock included', async () => {
    const [created] = (await bulk({ items: [record(0, 'SYNC-3', { brand: 'Anker' })] })).outcomes;
    const changed = await bulk({
      items: [
        {
          index: 0,
          draft: listingV1.ListingDraft.fromPartial({ sku: 'SYNC-3', priceCents: 990, quantity: 7 }),
          fields: ['sku', 'priceCents', 'quantity'],
        },
      ],
    });
    expect(changed.outcomes[0]).toMatchObject({
      status: S.BULK_UPSERT_STATUS_UPDATED,
      productId: created?.productId,
      version: 2,
    });
    expect(await listingOf(created?.productId ?? '')).toMatchObject({
      priceCents: 990,
      quantity: 7,
      brand: 'Anker',
      name: 'Pallet of chargers SYNC-3',
      promotePublicly: true,
    });
  });

  it('reports each bad item with its fields and writes the good ones; duplicate and shared skus are refused', async () => {
    await bulk({ mode: CREATE, items: [record(0, 'TWIN'), record(1, 'TWIN')] });
    const response = await bulk({
      items: [
        record(0, 'MIX-1'),
        record(1, 'MIX-2', { priceCents: -5, category: 'spaceships' }),
        record(2, 'MIX-1'),
        record(3, 'TWIN'),
        record(4, 'MIX-3'),
      ],
    });
    expect(statuses(response)).toEqual([
      S.BULK_UPSERT_STATUS_CREATED,
      S.BULK_UPSERT_STATUS_ERROR,
      S.BULK_UPSERT_STATUS_ERROR,
      S.BULK_UPSERT_STATUS_ERROR,
      S.BULK_UPSERT_STATUS_CREATED,
    ]);
    expect(response.outcomes[1]?.violations.map((violation) => violation.field).sort()).toEqual([
      'category',
      'price',
    ]);
    expect(response.outcomes[2]?.violations).toEqual([
      { field: 'sku', description: 'appears earlier in this request (item 0): send it once' },
    ]);
    expect(response.outcomes[3]?.violations[0]?.description).toMatch(/names 2 of your listings/);
  });

  it('never touches another seller’s listing with the same sku, nor lets one seller act for another', async () => {
    const [theirs] = (await bulk({ items: [record(0, 'SHARED', { priceCents: 100 })] }, OTHER_SELLER))
      .outcomes;
    const [mine] = (await bulk({ items: [record(0, 'SHARED', { priceCents: 200 })] })).outcomes;
    expect(mine?.status).toBe(S.BULK_UPSERT_STATUS_CREATED);
    expect(mine?.productId).not.toBe(theirs?.productId);
    expect((await listingOf(theirs?.productId ?? '')).priceCents).toBe(100);
    // The actor comes from the caller's verified token; it must be the seller the request names.
    await expect(
      bulk({ actor: actorOf(SELLER), sellerAccountId: OTHER_SELLER, items: [record(0, 'SHARED')] }),
    ).rejects.toMatchObject({ kind: 'forbidden' });
  });

  it('replays a keyed call exactly, writes nothing the second time, and refuses the key for another request', async () => {
    const items = [record(0, 'KEYED-1'), record(1, 'KEYED-2')];
    const first = await bulk({ items, idempotencyKey: 'sync-2026-11-26' });
    const events = await eventCount();
    const replay = await bulk({ items, idempotencyKey: 'sync-2026-11-26' });
    expect(replay).toEqual(first);
    expect(statuses(replay)).toEqual([S.BULK_UPSERT_STATUS_CREATED, S.BULK_UPSERT_STATUS_CREATED]);
    expect(await eventCount()).toBe(events);
    await expect(
      bulk({ items: [record(0, 'KEYED-3')], idempotencyKey: 'sync-2026-11-26' }),
    ).rejects.toMatchObject({
      kind: 'idempotency_conflict',
    });
  });

  it('binds the key to the items the caller refused too: another digest of them is another request', async () => {
    const items = [record(1, 'DIGEST-1')];
    const key = 'sync-with-refused-items';
    const first = await bulk({ items, idempotencyKey: key, refusedItemsDigest: 'refused-A' });
    expect(await bulk({ items, idempotencyKey: key, refusedItemsDigest: 'refused-A' })).toEqual(first);
    for (const refusedItemsDigest of ['refused-B', '']) {
      await expect(bulk({ items, idempotencyKey: key, refusedItemsDigest })).rejects.toMatchObject({
        kind: 'idempotency_conflict',
      });
    }
  });

  it('after a call that created its items but never recorded its answer, a retry creates nothing again', async () => {
    const items = [record(0, 'CRASH-1'), record(1, 'CRASH-2', { priceCents: -1 }), record(2, 'CRASH-3')];
    const first = await bulk({ mode: CREATE, items, idempotencyKey: 'crashed-call' });
    // As if the service died between the creates' commits and the answer's (docs/idempotency.md).
    await db.query(`DELETE FROM ${schema}.bulk_upsert_answers WHERE key = 'crashed-call'`);
    const events = await eventCount();
    const retried = await bulk({ mode: CREATE, items, idempotencyKey: 'crashed-call' });
    expect(retried).toEqual(first);
    expect(statuses(retried)).toEqual([
      S.BULK_UPSERT_STATUS_CREATED,
      S.BULK_UPSERT_STATUS_ERROR,
      S.BULK_UPSERT_STATUS_CREATED,
    ]);
    expect(await eventCount()).toBe(events);
  });

  it('creates each item once when two calls with one key race', async () => {
    const items = [record(0, 'RACE-1'), record(1, 'RACE-2')];
    const [a, b] = await Promise.all([
      bulk({ mode: CREATE, items, idempotencyKey: 'race' }),
      bulk({ mode: CREATE, items, idempotencyKey: 'race' }),
    ]);
    expect(a).toEqual(b);
    const rows = await db.query(`SELECT 1 FROM ${schema}.seller_listings WHERE sku LIKE 'RACE-%'`);
    expect(rows.rows).toHaveLength(2);
  });

  it('takes 1,000 items in one call and refuses more, an empty call and a missing mode, naming the field', async () => {
    const thousand = Array.from({ length: 1_000 }, (_, index) => record(index, `BIG-${index}`));
    const started = performance.now();
    const response = await bulk({ items: thousand });
    console.info(`1,000 creates in one bulk call: ${Math.round(performance.now() - started)} ms`);
    expect(response.outcomes).toHaveLength(1_000);
    expect(response.outcomes.every((outcome) => outcome.status === S.BULK_UPSERT_STATUS_CREATED)).toBe(true);
    expect(response.outcomes.map((outcome) => outcome.index)).toEqual(thousand.map((item) => item.index));
    // The creates share transactions (a multi-stream append per group), not one transaction per listing.
    const { rows } = await db.query<{ transactions: string }>(
      `SELECT count(DISTINCT transaction_id)::text AS transactions FROM ${schema}.events
        WHERE stream_id = ANY($1::text[])`,
      [response.outcomes.map((outcome) => outcome.productId)],
    );
    expect(Number(rows[0]?.transactions)).toBeLessThanOrEqual(1_000 / CREATES_PER_TRANSACTION);
    const listed = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${schema}.seller_listings WHERE sku LIKE 'BIG-%' AND version = 1`,
    );
    expect(listed.rows).toEqual([{ n: '1000' }]);
    for (const [request, field] of [
      [{ items: [...thousand, record(1_000, 'BIG-1000')] }, 'items'],
      [{ items: [] }, 'items'],
      [{ mode: listingV1.BulkUpsertMode.BULK_UPSERT_MODE_UNSPECIFIED, items: [record(0, 'X')] }, 'mode'],
    ] as Array<[Partial<listingV1.BulkUpsertListingsRequest>, string]>) {
      const refused = await bulk(request).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).violations.map((violation) => violation.path)).toEqual([field]);
    }
  }, 120_000);

  it('answers 250 items whose image hosts never answer within its image budget, each an error on imageUrl', async () => {
    const connectionsBefore = silent.connections();
    const items = Array.from({ length: 250 }, (_, index) =>
      imaged(index, `HANG-${index}`, { imageUrl: silent.imageUrl(`hang-${index}`) }),
    );
    const { outcomes, elapsedMs } = await timedBulk({ mode: CREATE, items });
    expect(elapsedMs).toBeLessThan(CALL_BUDGET_MS + WRITES_MS);
    expect(outcomes).toHaveLength(250);
    const messages = new Set<string>();
    for (const outcome of outcomes) {
      expect(outcome.status).toBe(S.BULK_UPSERT_STATUS_ERROR);
      expect(outcome.violations.map(({ field }) => field)).toEqual(['imageUrl']);
      messages.add(outcome.violations[0]?.description ?? '');
    }
    // Some fetches ran into their own timeout; once the call's time was spent, the rest failed without a fetch.
    expect([...messages].sort()).toEqual([TIMED_OUT, BUDGET_SPENT].sort());
    // At most FETCHES_AT_ONCE in flight, each for a timeout, during the budget (one round of slack for timers).
    const connections = silent.connections() - connectionsBefore;
    expect(connections).toBeLessThanOrEqual(FETCHES_AT_ONCE * (CALL_BUDGET_MS / FETCH_TIMEOUT_MS + 2));
  }, 60_000);

  it('applies the items whose images arrive and refuses the ones whose hosts hang, on the field of the URL', async () => {
    // Every fifth item's host hangs; the others answer at once.
    const items = Array.from({ length: 250 }, (_, index) =>
      imaged(index, `MIX-${index}`, {
        imageUrl: index % 5 === 4 ? silent.imageUrl(`mix-${index}`) : images.server.imageUrl(`mix-${index}`),
        ...(index % 25 === 0 ? { galleryImageUrls: [trickling.imageUrl(`gallery-${index}`)] } : {}),
      }),
    );
    const { outcomes, elapsedMs } = await timedBulk({ mode: CREATE, items });
    expect(elapsedMs).toBeLessThan(CALL_BUDGET_MS + WRITES_MS);
    const fieldsOf = (index: number) => outcomes[index]?.violations.map(({ field }) => field);
    outcomes.forEach((outcome, index) => {
      if (index % 5 === 4) {
        expect([outcome.status, fieldsOf(index)]).toEqual([S.BULK_UPSERT_STATUS_ERROR, ['imageUrl']]);
        expect(outcome.violations[0]?.description).toBe(TIMED_OUT);
      } else if (index % 25 === 0) {
        // A body that trickles in is bounded by the same timeout as one that never starts.
        expect([outcome.status, fieldsOf(index)]).toEqual([
          S.BULK_UPSERT_STATUS_ERROR,
          ['galleryImageUrls/0'],
        ]);
        expect(outcome.violations[0]?.description).toBe(TIMED_OUT);
      } else {
        expect(outcome.status).toBe(S.BULK_UPSERT_STATUS_CREATED);
      }
    });
    expect(outcomes.filter(({ status }) => status === S.BULK_UPSERT_STATUS_CREATED)).toHaveLength(190);
  }, 60_000);

  it('answers 1,000 items, updates and creates, whose hosts hang or trickle, within its image budget', async () => {
    const existing = Array.from({ length: 300 }, (_, index) => record(index, `HANGING-${index}`));
    const seeded = await timedBulk({ items: existing });
    expect(seeded.outcomes.every(({ status }) => status === S.BULK_UPSERT_STATUS_CREATED)).toBe(true);
    const items = Array.from({ length: 1_000 }, (_, index) =>
      index < 300
        ? imaged(index, `HANGING-${index}`, { imageUrl: trickling.imageUrl(`update-${index}`) })
        : imaged(index, `HANGING-${index}`, {
            imageUrl: images.server.imageUrl(`big-${index}`),
            galleryImageUrls: [silent.imageUrl(`big-${index}`)],
          }),
    );
    const { outcomes, elapsedMs } = await timedBulk({ items });
    expect(elapsedMs).toBeLessThan(CALL_BUDGET_MS + WRITES_MS);
    expect(outcomes).toHaveLength(1_000);
    outcomes.forEach((outcome, index) => {
      expect(outcome.status).toBe(S.BULK_UPSERT_STATUS_ERROR);
      const fields = outcome.violations.map(({ field }) => field);
      expect(fields).toContain(index < 300 ? 'imageUrl' : 'galleryImageUrls/0');
      for (const { description } of outcome.violations) {
        expect([TIMED_OUT, BUDGET_SPENT]).toContain(description);
      }
    });
    // Nothing was written: the listings are as the seeding call left them.
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${schema}.seller_listings WHERE sku LIKE 'HANGING-%' AND version = 1`,
    );
    expect(rows).toEqual([{ n: '300' }]);
  }, 60_000);
});
