import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  testEngines,
} from '@marketplace/database/testing';
import type { DeliveredMessage, EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import { createEmlMailer, type Mailer, type MailMessage } from '@marketplace/mailer';
import type { ServiceHandle } from '@marketplace/platform';
import { AppError, createLogger, ManualClock, newEventId } from '@marketplace/platform';
import { accountV1, listingV1, quoteV1 } from '@marketplace/proto';
import type { GrpcClient } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';
import { decodeQuoteEvent } from '../src/adapters/quote-event.codec.js';
import { startQuoteService } from '../src/index.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const SELLER = 7;
const OTHER_SELLER = 8;
const ANONYMOUS = { kind: 'anonymous', id: '' };
const SELLER_ACTOR = { kind: 'seller', id: String(SELLER) };
const buyerActor = (accountId: number) => ({ kind: 'buyer', id: String(accountId) });

/** Waits, a bounded time, until `find` resolves to something. */
const eventually = async <T>(
  find: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
): Promise<T> => {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > giveUpAt) throw new Error(`nothing found within ${timeoutMs} ms`);
    await sleep(20);
  }
};

const listingEvent = (listing: Partial<listingV1.Listing>, version = 1) => {
  const eventId = newEventId();
  const productId = listing.productId ?? 'product_1';
  const value = listingV1.ListingEvent.encode({
    eventId,
    productId,
    version,
    occurredAtMs: NOW,
    actor: SELLER_ACTOR,
    correlationId: '',
    payload: {
      $case: 'created',
      value: {
        listing: listingV1.Listing.fromPartial({
          productId,
          sellerAccountId: SELLER,
          name: 'Pallet of USB-C chargers',
          priceCents: 1_250,
          currency: 'USD',
          quantity: 480,
          promotePublicly: true,
          version,
          ...listing,
        }),
      },
    },
  }).finish();
  return { key: productId, value, headers: { ce_id: eventId } };
};

const sellerCreated = (accountId: number, email: string) => {
  const eventId = newEventId();
  const value = accountV1.AccountEvent.encode({
    eventId,
    accountId,
    version: 1,
    occurredAtMs: NOW,
    actor: { kind: 'admin', id: '' },
    correlationId: '',
    payload: {
      $case: 'created',
      value: { role: 'seller', name: `Seller ${accountId}`, email, company: '', country: '' },
    },
  }).finish();
  return { key: `account_${accountId}`, value, headers: { ce_id: eventId } };
};

const quoteRequest = (productId: string, quantity = 500): quoteV1.RequestQuoteRequest =>
  quoteV1.RequestQuoteRequest.fromPartial({
    actor: ANONYMOUS,
    productId,
    quantity,
    buyer: { email: 'buyer@example.test', name: 'Ada', company: 'Lovelace Ltd' },
    targetPriceCents: 1_000,
    message: 'Delivery by Friday?',
    correlationId: 'req-1',
  });

/** A mail server that can be held: sends wait (as on a slow SMTP exchange) until released. */
class HoldableMailer implements Mailer {
  /** Message-IDs of every send begun, in order. */
  readonly begun: string[] = [];
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  constructor(private readonly inner: Mailer) {}

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  async send(message: MailMessage): Promise<void> {
    this.begun.push(message.messageId ?? '');
    await this.gate;
    await this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

describe.each(testEngines())('quote service over gRPC on $name', ({ create }) => {
  const schema = freshSchemaName('quote_test');
  const logSchema = freshSchemaName('eventlog_test');
  const mailDirectory = mkdtempSync(join(tmpdir(), 'quote-mail-'));
  const published: DeliveredMessage[] = [];
  const clock = new ManualClock(NOW);
  let db: Database;
  let log: EventLog;
  let service: ServiceHandle;
  let grpc: GrpcClient<quoteV1.QuoteServiceDefinition>;
  const mailer = new HoldableMailer(createEmlMailer({ directory: mailDirectory, from: 'test@example.test' }));

  const mailTo = async (messageIdPart: string): Promise<string | undefined> => {
    const file = (await readdir(mailDirectory)).find(
      (name) => name.includes(messageIdPart) && name.endsWith('.eml'),
    );
    // Bodies are quoted-printable: joining the soft line breaks is enough for the phrases checked.
    return file && (await readFile(join(mailDirectory, file), 'utf8')).replace(/=\r?\n/g, '');
  };

  beforeAll(async () => {
    db = await create();
    log = await createEmbeddedEventLog({ db, schema: logSchema });
    await log.consume({
      topic: 'marketplace.quote.v1',
      group: 'quote-test',
      handler: async (batch) => {
        published.push(...batch.messages);
      },
    });
    await log.publish('marketplace.account.v1', [
      sellerCreated(SELLER, 'sales@tarnwick.test'),
      sellerCreated(OTHER_SELLER, 'sales@ostrander.test'),
    ]);
    await log.publish('marketplace.listing.v1', [
      listingEvent({ productId: 'product_1' }),
      listingEvent({ productId: 'product_2', promotePublicly: false }),
      listingEvent({ productId: 'product_3', sellerAccountId: OTHER_SELLER }),
    ]);
    service = await startQuoteService({
      db,
      log,
      logger: createLogger({ service: 'quote-test' }),
      clock,
      grpc: { host: '127.0.0.1', port: 0 },
      schema,
      mailer,
      publicBaseUrl: 'https://market.example.test',
    });
    grpc = createGrpcClient(quoteV1.QuoteServiceDefinition, service.address);
    // The listings arrive through the service's projection: wait until the first takes requests.
    await eventually(async () => {
      try {
        return await grpc.client.requestQuote(quoteRequest('product_3', 1));
      } catch (error) {
        if (error instanceof AppError && error.kind === 'not_found') return undefined;
        throw error;
      }
    });
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  /** How many requests of this quantity were filed (each test asks for its own quantities). */
  const filedWith = async (quantity: number): Promise<number> => {
    const { rows } = await db.query<{ count: number }>(
      `select count(*)::int as count from "${schema}".events
        where type = 'QuoteRequested' and (data->'quoteRequest'->>'quantity')::int = $1`,
      [quantity],
    );
    return rows[0]?.count ?? 0;
  };

  afterAll(async () => {
    mailer.release();
    grpc.close();
    await service.stop();
    await log.close();
    await dropSchema(db, schema);
    await dropSchema(db, logSchema);
    await db.close();
  });

  it('files a pending request with the listing snapshot, over the stock on purpose', async () => {
    const { quoteRequest: quote } = await grpc.client.requestQuote(quoteRequest('product_1'));
    expect(quote).toMatchObject({
      quoteRequestId: expect.any(Number),
      productId: 'product_1',
      sellerAccountId: SELLER,
      quantity: 500,
      buyer: { email: 'buyer@example.test', name: 'Ada', company: 'Lovelace Ltd' },
      buyerAccountId: undefined,
      targetPriceCents: 1_000,
      message: 'Delivery by Friday?',
      status: 'pending',
      agreedUnitPriceCents: undefined,
      productName: 'Pallet of USB-C chargers',
      listedUnitPriceCents: 1_250,
      availableQuantity: 480,
      exceedsAvailableStock: true,
      createdAtMs: NOW,
      version: 1,
    });
    expect(quote!.quoteRequestId).toBeGreaterThan(0);
  });

  it('keeps the freight terms the buyer saw in the request, whatever the listing says later', async () => {
    const productId = 'product_40';
    const shipping = (version: number, terms: Partial<listingV1.ListingShipping>) =>
      log.publish('marketplace.listing.v1', [
        listingEvent({ productId, shipping: listingV1.ListingShipping.fromPartial(terms) }, version),
      ]);
    const requestOnce = async () => {
      try {
        return (await grpc.client.requestQuote(quoteRequest(productId, 40))).quoteRequest;
      } catch (error) {
        if (error instanceof AppError && error.kind === 'not_found') return undefined;
        throw error;
      }
    };
    await shipping(1, { mode: 'flat_per_order', cents: 15_000 });
    const asked = await eventually(requestOnce);
    expect(asked.listingShipping).toEqual({ mode: 'flat_per_order', cents: 15_000 });
    const message = await eventually(() =>
      published.find((candidate) => candidate.key === `quote_${asked.quoteRequestId}`),
    );
    expect(decodeQuoteEvent(message.value).event.data.quoteRequest.product.shipping).toEqual({
      mode: 'flat_per_order',
      cents: 15_000,
    });
    // The seller changes the terms: a new request records the new ones, the first keeps what its buyer saw.
    await shipping(2, { mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' });
    const later = await eventually(async () => {
      const quote = await requestOnce();
      return quote?.listingShipping?.mode === 'buyer_pickup' ? quote : undefined;
    });
    expect(later.listingShipping).toEqual({ mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' });
    const { quoteRequests } = await grpc.client.listQuoteRequests({
      actor: SELLER_ACTOR,
      sellerAccountId: SELLER,
      status: 'all',
      limit: 200,
    });
    const first = quoteRequests.find(({ quoteRequestId }) => quoteRequestId === asked.quoteRequestId);
    expect(first?.listingShipping).toEqual({ mode: 'flat_per_order', cents: 15_000 });
    expect(first?.listingShippingRecorded).toBe(true);
    // A listing without terms gives a request that recorded none (no freight), not one recorded before terms.
    const none = (await grpc.client.requestQuote(quoteRequest('product_1', 41))).quoteRequest;
    expect(none).toMatchObject({ listingShipping: undefined, listingShippingRecorded: true });
    // A snapshot written before terms were projected does not know them: the request records none, so its
    // checkout uses the listing's terms rather than charging no freight.
    await db.query(
      `UPDATE "${schema}".listing_snapshots SET shipping = NULL, shipping_known = false WHERE product_id = $1`,
      [productId],
    );
    const unknown = (await grpc.client.requestQuote(quoteRequest(productId, 42))).quoteRequest;
    expect(unknown).toMatchObject({ listingShipping: undefined, listingShippingRecorded: false });
  });

  it('publishes QuoteRequested on marketplace.quote.v1 keyed by quote_<id>, and emails the seller from it', async () => {
    const { quoteRequest: quote } = await grpc.client.requestQuote({
      ...quoteRequest('product_1'),
      actor: buyerActor(21),
      buyerAccountId: 21,
    });
    const key = `quote_${quote!.quoteRequestId}`;
    const message = await eventually(() => published.find((candidate) => candidate.key === key));
    expect(message.headers).toMatchObject({
      ce_type: 'marketplace.quote.v1.QuoteRequested',
      ce_source: '/services/quote',
      ce_subject: key,
      'content-type': 'application/protobuf',
    });
    const decoded = decodeQuoteEvent(message.value);
    expect(decoded).toMatchObject({
      streamId: key,
      version: 1,
      actor: buyerActor(21),
      correlationId: 'req-1',
    });
    expect(decoded.event.data.quoteRequest).toMatchObject({ buyerAccountId: 21, status: 'pending' });

    const mail = await eventually(() =>
      mailTo(`quote-request.${quote!.quoteRequestId}.requested@market.example.test`),
    );
    expect(mail).toContain('To: sales@tarnwick.test');
    expect(mail).toContain(`quote request ${quote!.quoteRequestId}.`);
    expect(mail).toContain('more than the 480 units listed');
  });

  it("lists only the seller's own requests, by status, newest first; responds once; emails the buyer", async () => {
    const { quoteRequest: quote } = await grpc.client.requestQuote(quoteRequest('product_1', 20));
    const id = quote!.quoteRequestId;
    const pending = await grpc.client.listQuoteRequests({
      actor: SELLER_ACTOR,
      sellerAccountId: SELLER,
      status: 'pending',
      limit: 0,
    });
    expect(pending.quoteRequests[0]?.quoteRequestId).toBe(id);
    expect(
      pending.quoteRequests.every(
        (listed) => listed.sellerAccountId === SELLER && listed.status === 'pending',
      ),
    ).toBe(true);
    const others = await grpc.client.listQuoteRequests({
      actor: { kind: 'seller', id: String(OTHER_SELLER) },
      sellerAccountId: OTHER_SELLER,
      status: 'all',
      limit: 0,
    });
    expect(others.quoteRequests.map((listed) => listed.productId)).toEqual(['product_3']);

    await expect(
      grpc.client.respondToQuote({
        actor: { kind: 'seller', id: '8' },
        sellerAccountId: OTHER_SELLER,
        quoteRequestId: id,
        action: 'accept',
        message: '',
        correlationId: '',
      }),
    ).rejects.toMatchObject({ kind: 'not_found' });

    clock.advance(60_000);
    const { quoteRequest: answered } = await grpc.client.respondToQuote({
      actor: SELLER_ACTOR,
      sellerAccountId: SELLER,
      quoteRequestId: id,
      action: 'counter',
      counterPriceCents: 1_100,
      message: 'Best I can do',
      correlationId: '',
    });
    expect(answered).toMatchObject({
      status: 'responded',
      response: {
        action: 'counter',
        counterPriceCents: 1_100,
        message: 'Best I can do',
        respondedAtMs: NOW + 60_000,
      },
      agreedUnitPriceCents: 1_100,
      version: 2,
    });
    await expect(
      grpc.client.respondToQuote({
        actor: SELLER_ACTOR,
        sellerAccountId: SELLER,
        quoteRequestId: id,
        action: 'accept',
        message: '',
        correlationId: '',
      }),
    ).rejects.toMatchObject({ kind: 'conflict', message: expect.stringContaining('already answered') });

    const { quoteRequest: fetched } = await grpc.client.getQuoteRequest({ quoteRequestId: id });
    expect(fetched).toMatchObject({ status: 'responded', agreedUnitPriceCents: 1_100, quantity: 20 });
    const responded = await grpc.client.listQuoteRequests({
      actor: SELLER_ACTOR,
      sellerAccountId: SELLER,
      status: 'responded',
      limit: 0,
    });
    expect(responded.quoteRequests.map((listed) => listed.quoteRequestId)).toContain(id);

    const mail = await eventually(() => mailTo(`quote-request.${id}.responded@market.example.test`));
    expect(mail).toContain('To: buyer@example.test');
    expect(mail).toContain('countered');
    expect(mail).toContain('$11.00 per unit');
  });

  it('refuses a product it does not know, a non-public listing, and an invalid request', async () => {
    await expect(grpc.client.requestQuote(quoteRequest('product_999'))).rejects.toMatchObject({
      kind: 'not_found',
    });
    await expect(grpc.client.requestQuote(quoteRequest('product_2'))).rejects.toMatchObject({
      kind: 'not_found',
    });
    await expect(
      grpc.client.requestQuote({
        ...quoteRequest('product_1', 0),
        buyer: { email: 'nope', name: '', company: '' },
      }),
    ).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'quantity' }, { path: 'buyer/email' }],
    });
    await expect(grpc.client.getQuoteRequest({ quoteRequestId: 999_999 })).rejects.toMatchObject({
      kind: 'not_found',
    });
    await expect(
      grpc.client.listQuoteRequests({
        actor: SELLER_ACTOR,
        sellerAccountId: SELLER,
        status: 'archived',
        limit: 0,
      }),
    ).rejects.toMatchObject({ kind: 'validation', violations: [{ path: 'status' }] });
  });

  it('gives 20 concurrent requests 20 distinct positive ids, and counts them', async () => {
    const since = clock.now();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => grpc.client.requestQuote(quoteRequest('product_1', 3))),
    );
    const ids = new Set(answers.map(({ quoteRequest: quote }) => quote!.quoteRequestId));
    expect(ids.size).toBe(20);
    expect([...ids].every((id) => Number.isSafeInteger(id) && id > 0)).toBe(true);
    expect((await grpc.client.countQuoteRequestsSince({ sinceMs: since })).count).toBe(20);
  });

  it('lets one of two racing responses win and refuses the other as already answered', async () => {
    const { quoteRequest: quote } = await grpc.client.requestQuote(quoteRequest('product_1', 4));
    const respond = (action: string) =>
      grpc.client.respondToQuote({
        actor: SELLER_ACTOR,
        sellerAccountId: SELLER,
        quoteRequestId: quote!.quoteRequestId,
        action,
        message: '',
        correlationId: '',
      });
    const outcomes = await Promise.allSettled([respond('accept'), respond('decline')]);
    expect(outcomes.filter(({ status }) => status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.find(({ status }) => status === 'rejected')).toMatchObject({
      reason: { kind: 'conflict' },
    });
  });

  describe('claim tokens of anonymous requests', () => {
    const BUYER = 41;
    const claim = (quoteRequestId: number, claimToken: string, buyerAccountId = BUYER) =>
      grpc.client.claimQuoteRequest({
        actor: { kind: 'buyer', id: String(buyerAccountId) },
        quoteRequestId,
        buyerAccountId,
        claimToken,
        correlationId: '',
      });

    it('answers a token to an anonymous request only, the same on a retry with its key', async () => {
      const anonymous = await grpc.client.requestQuote({
        ...quoteRequest('product_1', 801),
        idempotencyKey: 'claim-1',
      });
      expect(anonymous.claimToken).toMatch(/^qct_[A-Za-z0-9_-]{43}$/);
      const repeat = await grpc.client.requestQuote({
        ...quoteRequest('product_1', 801),
        idempotencyKey: 'claim-1',
      });
      expect(repeat.claimToken).toBe(anonymous.claimToken);
      const verified = await grpc.client.requestQuote({
        ...quoteRequest('product_1', 802),
        actor: buyerActor(31),
        buyerAccountId: 31,
      });
      expect(verified.claimToken).toBe('');
    });

    it('gives the request to the account with its token; refuses a forged token, another id, and a second account', async () => {
      const { quoteRequest: quote, claimToken } = await grpc.client.requestQuote(
        quoteRequest('product_1', 803),
      );
      const id = quote!.quoteRequestId;
      const other = await grpc.client.requestQuote(quoteRequest('product_1', 804));
      const forged = `${claimToken.slice(0, -1)}${claimToken.endsWith('A') ? 'B' : 'A'}`;
      await expect(claim(id, forged)).rejects.toMatchObject({ kind: 'not_found' });
      await expect(claim(id, other.claimToken)).rejects.toMatchObject({ kind: 'not_found' });
      await expect(claim(id, '')).rejects.toMatchObject({ kind: 'not_found' });

      clock.advance(1_000);
      const { quoteRequest: claimed } = await claim(id, claimToken);
      expect(claimed).toMatchObject({ buyerAccountId: BUYER, claimedAtMs: clock.now(), version: 2 });
      await expect(claim(id, claimToken)).resolves.toMatchObject({ quoteRequest: { version: 2 } });
      await expect(claim(id, claimToken, 99)).rejects.toMatchObject({ kind: 'conflict' });
      const { quoteRequest: fetched } = await grpc.client.getQuoteRequest({ quoteRequestId: id });
      expect(fetched).toMatchObject({ buyerAccountId: BUYER });
      const claimedEvents = await db.query<{ n: number }>(
        `select count(*)::int as n from "${schema}".events where stream_id = $1 and type = 'QuoteClaimed'`,
        [`quote_${id}`],
      );
      expect(claimedEvents.rows[0]).toEqual({ n: 1 });
    });

    it('lets one of two accounts racing with the token claim the request', async () => {
      const { quoteRequest: quote, claimToken } = await grpc.client.requestQuote(
        quoteRequest('product_1', 805),
      );
      const outcomes = await Promise.allSettled([
        claim(quote!.quoteRequestId, claimToken, 51),
        claim(quote!.quoteRequestId, claimToken, 52),
      ]);
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.find((outcome) => outcome.status === 'rejected')).toMatchObject({
        reason: { kind: 'conflict' },
      });
    });

    it("sends the token in the buyer's email of an unclaimed request's answer", async () => {
      const { quoteRequest: quote, claimToken } = await grpc.client.requestQuote(
        quoteRequest('product_1', 806),
      );
      const id = quote!.quoteRequestId;
      await grpc.client.respondToQuote({
        actor: SELLER_ACTOR,
        sellerAccountId: SELLER,
        quoteRequestId: id,
        action: 'accept',
        message: '',
        correlationId: '',
      });
      const mail = await eventually(() => mailTo(`quote-request.${id}.responded@market.example.test`));
      expect(mail).toContain(claimToken);
      expect(mail).toContain(`/api/ucp/quotes/${id}/claim`);
    });
  });

  describe("a buyer's own requests", () => {
    const BUYER = 61;
    const asBuyer = (quantity: number) =>
      grpc.client.requestQuote({
        ...quoteRequest('product_1', quantity),
        actor: buyerActor(BUYER),
        buyerAccountId: BUYER,
      });

    it("shows a request to the account that owns it, or to the holder of an unclaimed one's token", async () => {
      const { quoteRequest: mine } = await asBuyer(901);
      const get = (quoteRequestId: number, buyerAccountId: number | undefined, claimToken = '') =>
        grpc.client.getBuyerQuoteRequest({
          actor: buyerAccountId === undefined ? ANONYMOUS : buyerActor(buyerAccountId),
          quoteRequestId,
          buyerAccountId,
          claimToken,
        });
      await expect(get(mine!.quoteRequestId, BUYER)).resolves.toMatchObject({
        quoteRequest: { quantity: 901 },
      });
      await expect(get(mine!.quoteRequestId, BUYER + 1)).rejects.toMatchObject({ kind: 'not_found' });
      await expect(get(mine!.quoteRequestId, undefined)).rejects.toMatchObject({ kind: 'not_found' });

      const anonymous = await grpc.client.requestQuote(quoteRequest('product_1', 902));
      const id = anonymous.quoteRequest!.quoteRequestId;
      await expect(get(id, undefined, anonymous.claimToken)).resolves.toMatchObject({
        quoteRequest: { quantity: 902 },
      });
      await expect(get(id, BUYER)).rejects.toMatchObject({ kind: 'not_found' });
      await expect(get(id, undefined, mine!.quoteRequestId === id ? '' : 'qct_forged')).rejects.toMatchObject(
        {
          kind: 'not_found',
        },
      );
      // Once claimed, the request is the account's: the token no longer reads it.
      await grpc.client.claimQuoteRequest({
        actor: { kind: 'buyer', id: String(BUYER) },
        quoteRequestId: id,
        buyerAccountId: BUYER,
        claimToken: anonymous.claimToken,
        correlationId: '',
      });
      await expect(get(id, BUYER)).resolves.toMatchObject({ quoteRequest: { buyerAccountId: BUYER } });
      await expect(get(id, undefined, anonymous.claimToken)).rejects.toMatchObject({ kind: 'not_found' });
    });

    it('lists them newest first, by status, a page at a time, with the total', async () => {
      const listed = await grpc.client.listBuyerQuoteRequests({
        actor: buyerActor(BUYER),
        buyerAccountId: BUYER,
        status: '',
        limit: 0,
        offset: 0,
      });
      const quantities = listed.quoteRequests.map((quote) => quote.quantity);
      expect(quantities).toEqual([902, 901]);
      expect(listed.total).toBe(2);
      const second = await grpc.client.listBuyerQuoteRequests({
        actor: buyerActor(BUYER),
        buyerAccountId: BUYER,
        status: 'all',
        limit: 1,
        offset: 1,
      });
      expect(second).toMatchObject({ total: 2, quoteRequests: [{ quantity: 901 }] });
      const past = await grpc.client.listBuyerQuoteRequests({
        actor: buyerActor(BUYER),
        buyerAccountId: BUYER,
        status: 'all',
        limit: 1,
        offset: 5,
      });
      expect(past).toMatchObject({ total: 2, quoteRequests: [] });
      const responded = await grpc.client.listBuyerQuoteRequests({
        actor: buyerActor(BUYER),
        buyerAccountId: BUYER,
        status: 'responded',
        limit: 0,
        offset: 0,
      });
      expect(responded.total).toBe(0);
      await expect(
        grpc.client.listBuyerQuoteRequests({
          actor: buyerActor(BUYER),
          buyerAccountId: BUYER,
          status: 'archived',
          limit: 500,
          offset: -1,
        }),
      ).rejects.toMatchObject({ kind: 'validation' });
    });

    it('gives an agreed price a week to be bought', async () => {
      const { quoteRequest: quote } = await asBuyer(903);
      const { quoteRequest: answered } = await grpc.client.respondToQuote({
        actor: SELLER_ACTOR,
        sellerAccountId: SELLER,
        quoteRequestId: quote!.quoteRequestId,
        action: 'accept',
        message: '',
        correlationId: '',
      });
      expect(answered!.offerExpiresAtMs).toBe(clock.now() + 7 * 24 * 3_600_000);
    });
  });

  it('queues the seller email in the projection and sends it after the commit: a held mail server holds up nothing', async () => {
    // Every email of the earlier tests' requests is out first (read from the requests themselves, not from the
    // log, which this test's subscriber may see later), so the one held is this test's.
    await eventually(async () => {
      const { rows } = await db.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM ${schema}.quote_requests q, LATERAL (
            SELECT 'requested' AS step UNION ALL SELECT 'responded' WHERE q.status = 'responded'
          ) steps
          WHERE NOT EXISTS (
            SELECT 1 FROM ${schema}.outgoing_mail m
             WHERE m.message_id = '<quote-request.' || q.quote_request_id || '.' || steps.step || '@market.example.test>'
               AND m.sent_at_ms IS NOT NULL)`,
      );
      return rows[0]?.waiting === 0 ? true : undefined;
    });
    mailer.hold();
    const { quoteRequest: held } = await grpc.client.requestQuote(quoteRequest('product_1', 30));
    const messageId = `<quote-request.${held!.quoteRequestId}.requested@market.example.test>`;
    await eventually(() => (mailer.begun.includes(messageId) ? true : undefined));
    // The send is in progress: the projection's transaction has committed (the event is recorded as applied),
    // and the database answers others at once. On the embedded engine, one session, both would wait for the
    // mail server if the send ran inside that transaction.
    const eventId = decodeQuoteEvent(
      (await eventually(() => published.find(({ key }) => key === `quote_${held!.quoteRequestId}`))).value,
    ).eventId;
    const applied = await db.query(
      `SELECT 1 FROM ${schema}.projection_applied_events WHERE projection = 'quote-notifications' AND event_id = $1`,
      [eventId],
    );
    expect(applied.rowCount).toBe(1);
    const { quoteRequest: meanwhile } = await grpc.client.requestQuote(quoteRequest('product_1', 31));
    expect(meanwhile!.status).toBe('pending');
    expect(await mailTo(`quote-request.${held!.quoteRequestId}.requested@`)).toBeUndefined();
    mailer.release();
    const mail = await eventually(() => mailTo(`quote-request.${held!.quoteRequestId}.requested@`));
    expect(mail).toContain('To: sales@tarnwick.test');
    await eventually(() => mailTo(`quote-request.${meanwhile!.quoteRequestId}.requested@`));
  });

  it('emails each request of a seller whose contact arrives after them, once it has arrived', async () => {
    const lateSeller = 9;
    await log.publish('marketplace.listing.v1', [
      listingEvent({ productId: 'product_9', sellerAccountId: lateSeller }),
    ]);
    const filed = await eventually(async () => {
      try {
        return await grpc.client.requestQuote(quoteRequest('product_9', 90));
      } catch (error) {
        if (error instanceof AppError && error.kind === 'not_found') return undefined;
        throw error;
      }
    });
    const { quoteRequest: second } = await grpc.client.requestQuote(quoteRequest('product_9', 91));
    const ids = [filed.quoteRequest!.quoteRequestId, second!.quoteRequestId];
    const queued = async () =>
      (
        await db.query(`SELECT 1 FROM ${schema}.outgoing_mail WHERE message_id = ANY($1::text[])`, [
          ids.map((id) => `<quote-request.${id}.requested@market.example.test>`),
        ])
      ).rowCount;
    await eventually(
      () =>
        published.filter((message) => ids.includes(Number(message.key.slice(6)))).length === 2 || undefined,
    );
    expect(await queued()).toBe(0);
    await log.publish('marketplace.account.v1', [sellerCreated(lateSeller, 'sales@latecomer.test')]);
    for (const id of ids) {
      const mail = await eventually(() => mailTo(`quote-request.${id}.requested@`), 30_000);
      expect(mail).toContain('To: sales@latecomer.test');
    }
    expect(await queued()).toBe(2);
  }, 40_000);

  it('sends one email for a QuoteRequested event delivered twice', async () => {
    const { quoteRequest: quote } = await grpc.client.requestQuote(quoteRequest('product_1', 40));
    const key = `quote_${quote!.quoteRequestId}`;
    const messageId = `<quote-request.${quote!.quoteRequestId}.requested@market.example.test>`;
    const message = await eventually(() => published.find((candidate) => candidate.key === key));
    await eventually(() => mailTo(`quote-request.${quote!.quoteRequestId}.requested@`));
    await log.publish('marketplace.quote.v1', [
      { key: message.key, value: message.value, headers: message.headers },
    ]);
    // A request filed after the redelivery is emailed after it: the redelivered event has been consumed by then.
    const { quoteRequest: later } = await grpc.client.requestQuote(quoteRequest('product_1', 41));
    await eventually(() => mailTo(`quote-request.${later!.quoteRequestId}.requested@`));
    expect(mailer.begun.filter((begun) => begun === messageId)).toHaveLength(1);
    const queued = await db.query(`SELECT 1 FROM ${schema}.outgoing_mail WHERE message_id = $1`, [messageId]);
    expect(queued.rowCount).toBe(1);
  });

  describe('with an idempotency key', () => {
    /** Quote requests filed for `quantity`: each test uses its own quantity to find its requests. */
    const keyed = (quantity: number, key: string): quoteV1.RequestQuoteRequest => ({
      ...quoteRequest('product_1', quantity),
      idempotencyKey: key,
    });

    it('answers a repeat with the request it filed, as it is now, filing nothing more', async () => {
      const first = await grpc.client.requestQuote(keyed(701, 'quote-key-1'));
      const repeat = await grpc.client.requestQuote({ ...keyed(701, 'quote-key-1'), correlationId: 'req-2' });
      expect(repeat).toEqual(first);
      await grpc.client.respondToQuote({
        actor: SELLER_ACTOR,
        sellerAccountId: SELLER,
        quoteRequestId: first.quoteRequest!.quoteRequestId,
        action: 'accept',
        message: '',
        correlationId: '',
      });
      const afterAnswer = await grpc.client.requestQuote(keyed(701, 'quote-key-1'));
      expect(afterAnswer.quoteRequest).toMatchObject({
        quoteRequestId: first.quoteRequest!.quoteRequestId,
        status: 'responded',
        version: 2,
      });
      expect(await filedWith(701)).toBe(1);
    });

    it('refuses the same key with another request as ALREADY_EXISTS (idempotency_conflict)', async () => {
      await grpc.client.requestQuote(keyed(702, 'quote-key-2'));
      const error = await grpc.client
        .requestQuote({ ...keyed(702, 'quote-key-2'), message: 'Changed my mind' })
        .catch((rejection: unknown) => rejection);
      expect(error).toMatchObject({ kind: 'idempotency_conflict' });
      // gRPC status 6, ALREADY_EXISTS (this package does not depend on nice-grpc-common for the enum).
      expect((error as AppError).cause).toMatchObject({ code: 6 });
      expect(await filedWith(702)).toBe(1);
    });

    it('scopes keys by buyer account, else by buyer email', async () => {
      const anonymous = keyed(703, 'quote-key-3');
      const otherBuyer = { ...anonymous, buyer: { email: 'other@example.test', name: '', company: '' } };
      const [mine, theirs] = [
        await grpc.client.requestQuote(anonymous),
        await grpc.client.requestQuote(otherBuyer),
      ];
      expect(theirs.quoteRequest!.quoteRequestId).not.toBe(mine.quoteRequest!.quoteRequestId);
      // The same mailbox in other letters is the same buyer.
      const shouted = { ...anonymous, buyer: { ...anonymous.buyer!, email: 'BUYER@example.test' } };
      await expect(grpc.client.requestQuote(shouted)).rejects.toMatchObject({ kind: 'idempotency_conflict' });
      const verified = await grpc.client.requestQuote({
        ...anonymous,
        actor: buyerActor(31),
        buyerAccountId: 31,
      });
      expect(verified.quoteRequest).toMatchObject({ buyerAccountId: 31 });
      expect(await filedWith(703)).toBe(3);
    });

    it('files one request for concurrent requests with one key', async () => {
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => grpc.client.requestQuote(keyed(704, 'quote-key-4'))),
      );
      expect(new Set(answers.map(({ quoteRequest: quote }) => quote!.quoteRequestId)).size).toBe(1);
      expect(await filedWith(704)).toBe(1);
    });

    it('records nothing for a refused request, so the key files the corrected one', async () => {
      await expect(grpc.client.requestQuote({ ...keyed(0, 'quote-key-5') })).rejects.toMatchObject({
        kind: 'validation',
      });
      await expect(
        grpc.client.requestQuote({ ...keyed(705, 'quote-key-5'), productId: 'product_2' }),
      ).rejects.toMatchObject({ kind: 'not_found' });
      await grpc.client.requestQuote(keyed(705, 'quote-key-5'));
      expect(await filedWith(705)).toBe(1);
    });

    it('refuses a malformed key as a violation of idempotency_key', async () => {
      await expect(grpc.client.requestQuote(keyed(706, 'x'.repeat(256)))).rejects.toMatchObject({
        kind: 'validation',
        violations: [{ path: 'idempotency_key', message: 'must be at most 255 characters' }],
      });
      expect(await filedWith(706)).toBe(0);
    });
  });

  // docs/security.md, "Internal calls": a valid token for one account cannot act for another.
  describe('the acting account comes from the verified internal token', () => {
    const BUYER = 63;
    const VICTIM = 62;

    it("refuses every call whose body names another account than the token's, and changes nothing", async () => {
      const { quoteRequest: victims } = await grpc.client.requestQuote({
        ...quoteRequest('product_1', 950),
        actor: buyerActor(VICTIM),
        buyerAccountId: VICTIM,
      });
      const id = victims!.quoteRequestId;
      const anonymous = await grpc.client.requestQuote(quoteRequest('product_1', 951));
      // The client signs its token for the request's actor: BUYER's token, VICTIM (or another seller) in the body.
      const forged = [
        grpc.client.requestQuote({
          ...quoteRequest('product_1', 952),
          actor: buyerActor(BUYER),
          buyerAccountId: VICTIM,
        }),
        grpc.client.requestQuote({ ...quoteRequest('product_1', 953), buyerAccountId: VICTIM }),
        grpc.client.claimQuoteRequest({
          actor: buyerActor(BUYER),
          quoteRequestId: anonymous.quoteRequest!.quoteRequestId,
          buyerAccountId: VICTIM,
          claimToken: anonymous.claimToken,
          correlationId: '',
        }),
        grpc.client.getBuyerQuoteRequest({
          actor: buyerActor(BUYER),
          quoteRequestId: id,
          buyerAccountId: VICTIM,
          claimToken: '',
        }),
        grpc.client.listBuyerQuoteRequests({
          actor: buyerActor(BUYER),
          buyerAccountId: VICTIM,
          status: 'all',
          limit: 0,
          offset: 0,
        }),
        grpc.client.listQuoteRequests({
          actor: buyerActor(SELLER),
          sellerAccountId: SELLER,
          status: 'all',
          limit: 0,
        }),
        grpc.client.listQuoteRequests({
          actor: { kind: 'seller', id: String(OTHER_SELLER) },
          sellerAccountId: SELLER,
          status: 'all',
          limit: 0,
        }),
        grpc.client.respondToQuote({
          actor: { kind: 'seller', id: String(OTHER_SELLER) },
          sellerAccountId: SELLER,
          quoteRequestId: id,
          action: 'accept',
          message: '',
          correlationId: '',
        }),
      ];
      for (const call of forged) {
        await expect(call).rejects.toMatchObject({
          kind: 'forbidden',
          message: expect.stringMatching(/account_id \d+ is not the authenticated caller's account/),
        });
      }
      const { quoteRequest: after } = await grpc.client.getQuoteRequest({ quoteRequestId: id });
      expect(after).toMatchObject({ status: 'pending', buyerAccountId: VICTIM, version: 1 });
      const { quoteRequest: unclaimed } = await grpc.client.getQuoteRequest({
        quoteRequestId: anonymous.quoteRequest!.quoteRequestId,
      });
      expect(unclaimed!.buyerAccountId).toBeUndefined();
      expect(await filedWith(952)).toBe(0);
      expect(await filedWith(953)).toBe(0);
    });
  });

  // Last: it moves the clock a week on, which lets the mail worker purge the sent mail earlier tests look for.
  describe('negotiation rounds', () => {
    const BUYER = 71;
    const ask = async (quantity: number) =>
      (
        await grpc.client.requestQuote({
          ...quoteRequest('product_1', quantity),
          actor: buyerActor(BUYER),
          buyerAccountId: BUYER,
        })
      ).quoteRequest!.quoteRequestId;
    const seller = (quoteRequestId: number, action: string, counterPriceCents?: number) =>
      grpc.client.respondToQuote({
        actor: SELLER_ACTOR,
        sellerAccountId: SELLER,
        quoteRequestId,
        action,
        counterPriceCents,
        message: '',
        correlationId: '',
      });
    const buyer = (
      quoteRequestId: number,
      action: string,
      counterPriceCents?: number,
      buyerAccountId = BUYER,
    ) =>
      grpc.client.respondToCounterOffer({
        actor: buyerActor(buyerAccountId),
        buyerAccountId,
        quoteRequestId,
        action,
        counterPriceCents,
        message: action === 'counter' ? 'Meet me halfway' : '',
        correlationId: '',
      });

    it('counters back and forth to an agreement, each step an event, both sides emailed', async () => {
      const id = await ask(500);
      await seller(id, 'counter', 1_150);
      clock.advance(60_000);
      const { quoteRequest: countered } = await buyer(id, 'counter', 1_050);
      expect(countered).toMatchObject({
        status: 'pending',
        negotiationState: 'awaiting_seller',
        agreedUnitPriceCents: undefined,
        offerExpiresAtMs: clock.now() + 7 * 24 * 3_600_000,
        version: 3,
      });
      // The buyer's counter is in the seller's pending inbox again.
      const inbox = await grpc.client.listQuoteRequests({
        actor: SELLER_ACTOR,
        sellerAccountId: SELLER,
        status: 'pending',
        limit: 0,
      });
      expect(inbox.quoteRequests.map((listed) => listed.quoteRequestId)).toContain(id);

      const { quoteRequest: agreed } = await seller(id, 'accept');
      expect(agreed).toMatchObject({
        status: 'responded',
        negotiationState: 'agreed',
        agreedUnitPriceCents: 1_050,
      });
      expect(agreed!.history.map(({ party, action, priceCents }) => [party, action, priceCents])).toEqual([
        ['seller', 'counter', 1_150],
        ['buyer', 'counter', 1_050],
        ['seller', 'accept', 1_050],
      ]);
      const { quoteRequest: seen } = await grpc.client.getBuyerQuoteRequest({
        actor: buyerActor(BUYER),
        quoteRequestId: id,
        buyerAccountId: BUYER,
        claimToken: '',
      });
      expect(seen!.history).toHaveLength(3);

      const steps = await eventually(() => {
        const mine = published
          .map((message) => decodeQuoteEvent(message.value))
          .filter((decoded) => decoded.streamId === `quote_${id}`);
        return mine.length === 4 ? mine : undefined;
      });
      expect(steps.map(({ event }) => event.type)).toEqual([
        'QuoteRequested',
        'QuoteResponded',
        'QuoteBuyerResponded',
        'QuoteResponded',
      ]);
      const toSeller = await eventually(() => mailTo(`quote-request.${id}.step-2@market.example.test`));
      expect(toSeller).toContain('To: sales@tarnwick.test');
      expect(toSeller).toContain('countered your counter-offer');
      expect(toSeller).toContain('$10.50 per unit');
      const toBuyer = await eventually(() => mailTo(`quote-request.${id}.step-3@market.example.test`));
      expect(toBuyer).toContain('To: buyer@example.test');
      expect(toBuyer).toContain('accepted your counter-offer');
      expect(toBuyer).toContain('$10.50 per unit');
    });

    it('refuses another account, a second answer, and an expired offer', async () => {
      const id = await ask(501);
      await expect(buyer(id, 'accept')).rejects.toMatchObject({ kind: 'conflict' });
      await seller(id, 'counter', 1_200);
      await expect(buyer(id, 'accept', undefined, BUYER + 1)).rejects.toMatchObject({ kind: 'not_found' });
      // A token of one buyer naming another in the body: refused before anything is decided.
      await expect(
        grpc.client.respondToCounterOffer({
          actor: buyerActor(BUYER + 1),
          buyerAccountId: BUYER,
          quoteRequestId: id,
          action: 'accept',
          message: '',
          correlationId: '',
        }),
      ).rejects.toMatchObject({ kind: 'forbidden' });
      await expect(buyer(id + 10_000, 'accept')).rejects.toMatchObject({ kind: 'not_found' });
      await buyer(id, 'decline');
      await expect(buyer(id, 'accept')).rejects.toMatchObject({
        kind: 'conflict',
        message: expect.stringContaining('declined'),
      });

      const late = await ask(502);
      await seller(late, 'counter', 1_200);
      clock.advance(7 * 24 * 3_600_000);
      await expect(buyer(late, 'accept')).rejects.toMatchObject({
        kind: 'conflict',
        message: expect.stringContaining('expired'),
      });
    });

    it('lets one of two racing buyer answers win', async () => {
      const id = await ask(503);
      await seller(id, 'counter', 1_200);
      const outcomes = await Promise.allSettled([buyer(id, 'accept'), buyer(id, 'counter', 1_000)]);
      expect(outcomes.filter(({ status }) => status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.find(({ status }) => status === 'rejected')).toMatchObject({
        reason: { kind: 'conflict' },
      });
      const { quoteRequest: after } = await grpc.client.getQuoteRequest({ quoteRequestId: id });
      expect(after!.history).toHaveLength(2);
    });
  });
});
