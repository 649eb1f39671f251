import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';
import { mailText } from '../src/harness/mail-store.js';
import { eventually } from '../src/harness/processes.js';
import { WebhookReceiver } from '../src/harness/webhook-receiver.js';
import { createHmac, timingSafeEqual } from 'node:crypto';

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}

interface OrderBody {
  readonly order_id: number;
  readonly status: string;
  readonly [field: string]: unknown;
}

const SERVER_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN_EMAIL = 'operator@marketplace.example';

const onServer = async (sql: string): Promise<void> => {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
};

/**
 * Checkout and orders through the gateway of `pnpm start` on a real PostgreSQL database of its own (so the race
 * runs on real row locks and transactions): the race for the last units, the order lifecycle with its tools and
 * the operator's dispute email, and who may touch which order.
 */
describe('checkout and orders (embedded mode on PostgreSQL)', () => {
  const databaseName = `e2e_orders_${randomBytes(4).toString('hex')}`;
  let marketplace: EmbeddedMarketplace;
  let seller: Account;
  let otherSeller: Account;
  let buyer: Account;
  let otherBuyer: Account;

  const call = (
    path: string,
    init: { method?: string; body?: unknown; apiKey?: string } = {},
  ): Promise<Answer> =>
    marketplace.client.request(path, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.apiKey ? { 'x-mcp-api-key': init.apiKey } : {}),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  const invoke = (tool: string, parameters: unknown, apiKey?: string): Promise<Answer> =>
    call('/api/mcp/invoke', { method: 'POST', body: { tool, parameters }, apiKey });
  const publish = async (listing: Record<string, unknown>, owner = seller): Promise<string> => {
    const published = await marketplace.client.publish(owner.apiKey, {
      description: 'Overstock lot',
      imageUrl: marketplace.images.imageUrl('lot'),
      promotePublicly: true,
      ...listing,
    });
    expect(published.status).toBe(201);
    return published.body.id;
  };
  const quickBuy = (productId: string, quantity: number, account: Account): Promise<Answer> =>
    invoke(
      'quick_buy',
      { product_id: productId, quantity, buyer_email: 'buyer@example.com', shipping_country: 'US' },
      account.apiKey,
    );
  const orderOf = (answer: Answer): OrderBody => {
    expect(answer.status).toBe(200);
    return (answer.body as { order: OrderBody }).order;
  };

  beforeAll(async () => {
    await onServer(`CREATE DATABASE ${databaseName}`);
    const databaseUrl = new URL(SERVER_URL);
    databaseUrl.pathname = `/${databaseName}`;
    marketplace = await EmbeddedMarketplace.start({
      env: { DATABASE_URL: databaseUrl.toString(), ADMIN_EMAIL },
    });
    const admin = marketplace.client;
    [seller, otherSeller, buyer, otherBuyer] = await Promise.all([
      admin.createAccount('seller', 'Order Seller'),
      admin.createAccount('seller', 'Other Order Seller'),
      admin.createAccount('buyer', 'Order Buyer'),
      admin.createAccount('buyer', 'Other Order Buyer'),
    ]);
  }, 180_000);

  afterAll(async () => {
    await marketplace?.stop();
    await onServer(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  }, 60_000);

  it('sells exactly the last 10 units to 50 racing buyers: stock 0, no order lost or doubled', async () => {
    const productId = await publish({
      name: 'Quellmoor last ten headsets',
      price: 20,
      quantity: 10,
      instantCheckout: true,
    });
    const admin = marketplace.client;
    const buyers = await Promise.all(
      Array.from({ length: 50 }, (_, n) => admin.createAccount('buyer', `Racing Buyer ${n}`)),
    );
    // Each buyer prices a session first, then all complete at once.
    const sessions = await Promise.all(
      buyers.map(async (racer) => {
        const created = await call('/api/ucp/checkout', {
          method: 'POST',
          apiKey: racer.apiKey,
          body: {
            line_items: [{ product_id: productId, quantity: 1 }],
            buyer: { email: 'race@example.com' },
          },
        });
        expect(created).toMatchObject({ status: 201, body: { status: 'ready_for_complete' } });
        return (created.body as { id: string }).id;
      }),
    );
    const completions = await Promise.all(
      sessions.map((id, n) =>
        call(`/api/ucp/checkout/${id}/complete`, { method: 'POST', apiKey: buyers[n]?.apiKey }),
      ),
    );
    const statuses = completions.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 409)).toHaveLength(40);
    const orderIds = completions.flatMap((answer) =>
      answer.status === 200
        ? (answer.body as { orders: OrderBody[] }).orders.map((order) => order.order_id)
        : [],
    );
    expect(new Set(orderIds).size).toBe(10);

    // The seller sees exactly those ten orders among every id handed out so far.
    const maxId = Math.max(...orderIds);
    const exported = await invoke(
      'bulk_export_orders',
      { order_ids: Array.from({ length: Math.min(maxId, 200) }, (_, n) => n + 1) },
      seller.apiKey,
    );
    expect(exported.status).toBe(200);
    const csv = exported.body as { row_count: number; csv: string };
    expect(csv.row_count).toBe(10);
    expect(csv.csv.split('\r\n').filter((line) => line.includes('Quellmoor'))).toHaveLength(10);

    // A retried completion answers the same order, and a late buyer is told the stock ran out.
    const winner = completions.findIndex((answer) => answer.status === 200);
    const retried = await call(`/api/ucp/checkout/${sessions[winner] ?? ''}/complete`, {
      method: 'POST',
      apiKey: buyers[winner]?.apiKey,
    });
    expect((retried.body as { orders: OrderBody[] }).orders.map((o) => o.order_id)).toEqual(
      (completions[winner]?.body as { orders: OrderBody[] }).orders.map((o) => o.order_id),
    );
    const late = await quickBuy(productId, 1, buyer);
    expect(late.status).toBe(409);
    const product = await eventually(
      async () => {
        const details = await call(`/api/ucp/catalog/products/${productId}`);
        const body = details.body as { quantity_available?: number; availability?: string };
        return body.quantity_available === 0 ? body : undefined;
      },
      { timeoutMs: 15_000, describe: () => marketplace.process.logs },
    );
    expect(product.availability).toBe('out_of_stock');
  }, 120_000);

  it('escalates a bulk checkout to a quote and refuses quick_buy without instant checkout', async () => {
    const productId = await publish({ name: 'Brackenfold bulk socks', price: 1, quantity: 1_000 });
    const bulk = await call('/api/ucp/checkout', {
      method: 'POST',
      body: { line_items: [{ product_id: productId, quantity: 150 }] },
    });
    expect(bulk.status).toBe(201);
    expect(bulk.body).toMatchObject({
      status: 'requires_escalation',
      currency: 'USD',
      totals: { subtotal: 15_000 },
    });
    expect((bulk.body as { messages: string[] }).messages.join(' ')).toContain('request_quote');
    const notInstant = await quickBuy(productId, 2, buyer);
    expect(notInstant.status).toBe(409);
    const badCountry = await invoke(
      'quick_buy',
      { product_id: productId, quantity: 1, buyer_email: 'b@example.com', shipping_country: 'XX' },
      buyer.apiKey,
    );
    expect(badCountry.status).toBe(400);
    expect(JSON.stringify(badCountry.body)).toContain('shipping_country');
    const anonymousComplete = await call(`/api/ucp/checkout/${(bulk.body as { id: string }).id}/complete`, {
      method: 'POST',
    });
    expect(anonymousComplete.status).toBe(401);
  });

  it("keeps a negotiated price single-use and its owner's: claim tokens, no email takeover, one order per quote", async () => {
    const productId = await publish({ name: 'Tarnbeck pallet of kettles', price: 10, quantity: 1_000 });
    const requestQuote = (body: Record<string, unknown>, apiKey?: string) =>
      call('/api/ucp/quotes', { method: 'POST', body: { product_id: productId, ...body }, apiKey });
    // The quote service learns the listing from its event.
    const asked = await eventually(
      async () => {
        const answer = await requestQuote({ quantity: 300, buyer: { email: 'victim@buyer.example' } });
        return answer.status === 201 ? answer : undefined;
      },
      { timeoutMs: 15_000, describe: () => marketplace.process.logs },
    );
    const { quote_request_id: quoteId, claim_token: claimToken } = asked.body as {
      quote_request_id: number;
      claim_token: string;
    };
    expect(claimToken).toMatch(/^qct_/);
    const accepted = await invoke(
      'respond_to_quote',
      { quote_request_id: quoteId, action: 'counter', counter_price: 500 },
      seller.apiKey,
    );
    expect(accepted.status).toBe(200);
    const checkout = (lines: unknown[], account: Account, buyerEmail?: string) =>
      call('/api/ucp/checkout', {
        method: 'POST',
        body: { line_items: lines, ...(buyerEmail ? { buyer: { email: buyerEmail } } : {}) },
        apiKey: account.apiKey,
      });
    const line = { product_id: productId, quantity: 300, quote_request_id: quoteId };

    // Typing the victim's email proves nothing; a forged token reads like a missing request.
    expect((await checkout([line], otherBuyer, 'victim@buyer.example')).status).toBe(400);
    const claim = (token: string, account: Account) =>
      call(`/api/ucp/quotes/${quoteId}/claim`, {
        method: 'POST',
        body: { claim_token: token },
        apiKey: account.apiKey,
      });
    const status = (headers: Record<string, string>) =>
      marketplace.client.request(`/api/ucp/quotes/${quoteId}`, { headers });
    const byToken = await status({ 'x-quote-claim-token': claimToken });
    expect(byToken.body).toMatchObject({
      status: 'responded',
      agreed_price: 500,
      offer_expires_at: expect.any(String),
      how_to_buy: expect.stringMatching(/^Claim it/),
    });
    expect((await status({ 'x-quote-claim-token': `${claimToken.slice(0, -2)}xx` })).status).toBe(404);
    expect((await status({ 'x-mcp-api-key': otherBuyer.apiKey })).status).toBe(404);
    expect((await claim(`${claimToken.slice(0, -2)}xx`, otherBuyer)).status).toBe(404);
    expect((await claim(claimToken, seller)).status).toBe(403);
    expect((await claim(claimToken, buyer)).body).toMatchObject({
      quote_request_id: quoteId,
      agreed_price: 500,
    });
    expect((await claim(claimToken, otherBuyer)).status).toBe(409);
    expect((await status({ 'x-mcp-api-key': buyer.apiKey })).body).toMatchObject({
      claimed_at: expect.any(String),
    });
    expect((await status({ 'x-quote-claim-token': claimToken })).status).toBe(404);
    const mine = await invoke('list_my_quotes', { status: 'responded' }, buyer.apiKey);
    expect(mine.body).toMatchObject({ total: 1, quote_requests: [{ quote_request_id: quoteId }] });

    // One quote on two lines of one checkout.
    const twice = await checkout([line, line], buyer);
    expect(twice.status).toBe(400);
    expect(JSON.stringify(twice.body)).toContain('line_items/1/quote_request_id');

    // Two sessions of one quote completed at once: one order, one 409.
    const sessions = [await checkout([line], buyer), await checkout([line], buyer)];
    expect(sessions.map((session) => session.body)).toEqual([
      expect.objectContaining({
        status: 'ready_for_complete',
        totals: expect.objectContaining({ subtotal: 150_000 }),
      }),
      expect.objectContaining({ status: 'ready_for_complete' }),
    ]);
    const completions = await Promise.all(
      sessions.map((session) =>
        call(`/api/ucp/checkout/${(session.body as { id: string }).id}/complete`, {
          method: 'POST',
          apiKey: buyer.apiKey,
        }),
      ),
    );
    expect(completions.map((answer) => answer.status).sort()).toEqual([200, 409]);
    // Used once: a later checkout of the same quote is refused before anything is priced.
    const reuse = await checkout([{ ...line, quantity: 1 }], buyer);
    expect(reuse.status).toBe(409);
    expect(JSON.stringify(reuse.body)).toContain('already used by order');

    // Accept and pay in one step, over MCP and REST: at the agreed price, once, with no instant checkout.
    const agreedQuote = async (quantity: number) => {
      const filed = await requestQuote({ quantity, buyer: { email: 'x@buyer.example' } }, buyer.apiKey);
      const id = (filed.body as { quote_request_id: number }).quote_request_id;
      await invoke(
        'respond_to_quote',
        { quote_request_id: id, action: 'counter', counter_price: 400 },
        seller.apiKey,
      );
      return id;
    };
    const viaTool = await agreedQuote(200);
    const paid = await invoke(
      'accept_quote_and_pay',
      { quote_request_id: viaTool, shipping_country: 'DE' },
      buyer.apiKey,
    );
    expect(paid.status).toBe(200);
    expect((paid.body as { order: OrderBody }).order).toMatchObject({
      quantity: 200,
      total: 80_000,
      shipping_country: 'DE',
    });
    expect((await invoke('accept_quote_and_pay', { quote_request_id: viaTool }, buyer.apiKey)).status).toBe(
      409,
    );
    expect(
      (await invoke('accept_quote_and_pay', { quote_request_id: viaTool }, otherBuyer.apiKey)).status,
    ).toBe(404);
    const viaRest = await agreedQuote(150);
    const bought = await call(`/api/ucp/quotes/${viaRest}/accept-and-pay`, {
      method: 'POST',
      body: { quantity: 100 },
      apiKey: buyer.apiKey,
    });
    expect(bought.status).toBe(201);
    expect((bought.body as { order: OrderBody }).order).toMatchObject({
      quantity: 100,
      quote_request_id: viaRest,
    });

    // A buyer key files under the account's own identity, whatever the body says.
    await requestQuote(
      { quantity: 5, buyer: { email: 'ceo@bigcorp.example', name: 'Big Corp CEO' } },
      buyer.apiKey,
    );
    const inbox = await invoke('get_quote_requests', { status: 'pending' }, seller.apiKey);
    const filed = (
      inbox.body as {
        quote_requests: { quantity: number; buyer: { email: string }; buyer_verified: boolean }[];
      }
    ).quote_requests.find((request) => request.quantity === 5);
    expect(filed).toMatchObject({ buyer: { email: 'order.buyer@example.com' }, buyer_verified: true });
  }, 120_000);

  it('follows an order from purchase to dispute, and only its owners may touch it', async () => {
    const productId = await publish({
      name: '=HYPERLINK("http://evil.example","Crestwell monitors")',
      price: 80,
      quantity: 20,
      instantCheckout: true,
    });
    const order = orderOf(await quickBuy(productId, 3, buyer));
    expect(order).toMatchObject({ status: 'awaiting_shipment', quantity: 3, total: 24_000, tracking: null });
    const id = order.order_id;

    // Anonymous callers, other buyers and other sellers.
    expect((await call(`/api/orders/${id}`)).status).toBe(401);
    expect((await invoke('get_order_status', { order_id: id })).status).toBe(401);
    expect((await invoke('bulk_mark_shipped', { order_ids: [id] })).status).toBe(401);
    expect((await call(`/api/orders/${id}`, { apiKey: otherBuyer.apiKey })).status).toBe(404);
    expect((await invoke('get_order_status', { order_id: id }, otherBuyer.apiKey)).status).toBe(404);
    expect(
      (await call(`/api/orders/${id}/confirm`, { method: 'POST', apiKey: otherBuyer.apiKey })).status,
    ).toBe(404);
    expect((await invoke('get_order_status', { order_id: id }, seller.apiKey)).status).toBe(403);
    expect((await invoke('bulk_mark_shipped', { order_ids: [id] }, buyer.apiKey)).status).toBe(403);
    const foreignShip = await invoke(
      'bulk_mark_shipped',
      { order_ids: [id], tracking_number: 'X' },
      otherSeller.apiKey,
    );
    expect(foreignShip.body).toMatchObject({ updated: [], skipped: [{ order_id: id, reason: 'not_found' }] });
    const foreignExport = await invoke('bulk_export_orders', { order_ids: [id] }, otherSeller.apiKey);
    expect(foreignExport.body).toMatchObject({ row_count: 0, not_found_order_ids: [id] });
    expect((await call(`/api/seller/orders/${id}`, { apiKey: otherSeller.apiKey })).status).toBe(404);
    expect(
      (await call(`/api/seller/orders/${id}/mark-delivered`, { method: 'POST', apiKey: otherSeller.apiKey }))
        .status,
    ).toBe(404);

    // The CSV cell of a product name that looks like a formula is text.
    const exported = await invoke('bulk_export_orders', { order_ids: [id] }, seller.apiKey);
    const [header, row] = (exported.body as { csv: string }).csv.split('\r\n');
    expect(header).toBe('Order ID,Product,Buyer,Quantity,Total,Status,Date');
    expect(row).toContain(`${id},"'=HYPERLINK(""http://evil.example"",""Crestwell monitors"")",`);

    // The seller ships (twice: the same answer) and delivers; the buyer sees tracking and the deadline.
    const tracking = {
      tracking_number: '1Z999AA1',
      carrier_name: 'UPS',
      tracking_url: 'https://ups.example/1Z999AA1',
    };
    for (let attempt = 0; attempt < 2; attempt++) {
      const shipped = await invoke(
        'bulk_mark_shipped',
        { order_ids: [id, 999_999], ...tracking },
        seller.apiKey,
      );
      expect(shipped.body).toMatchObject({
        updated_order_ids: [id],
        skipped: [{ order_id: 999_999, reason: 'not_found' }],
      });
    }
    expect(
      (
        await call(`/api/orders/${id}/dispute`, {
          method: 'POST',
          apiKey: buyer.apiKey,
          body: { reason: 'damaged', description: 'Too early' },
        })
      ).status,
    ).toBe(409);
    const delivered = await call(`/api/seller/orders/${id}/mark-delivered`, {
      method: 'POST',
      apiKey: seller.apiKey,
    });
    expect(delivered.status).toBe(200);
    const status = await invoke('get_order_status', { order_id: id }, buyer.apiKey);
    expect(status.body).toMatchObject({
      status: 'delivered',
      tracking: {
        tracking_number: '1Z999AA1',
        carrier_name: 'UPS',
        tracking_url: 'https://ups.example/1Z999AA1',
      },
      inspection_deadline: expect.any(String),
    });

    // Disputes: another buyer cannot, a bad reason is named, the owner can.
    const dispute = {
      order_id: id,
      reason: 'missing_units',
      description: 'One pallet missing',
      photo_urls: ['https://photos.example/1.jpg'],
    };
    expect((await invoke('open_dispute', dispute, otherBuyer.apiKey)).status).toBe(404);
    const badReason = await invoke('open_dispute', { ...dispute, reason: 'meh' }, buyer.apiKey);
    expect(badReason.status).toBe(400);
    expect(JSON.stringify(badReason.body)).toContain('reason');
    const disputed = await invoke('open_dispute', dispute, buyer.apiKey);
    expect(disputed.body).toMatchObject({ status: 'issue_reported', issue: { reason: 'missing_units' } });

    const mail = await eventually(() => mailText(marketplace.dataDir, `dispute-order-${id}@`), {
      timeoutMs: 45_000,
      describe: () => `no dispute mail:\n${marketplace.process.logs}`,
    });
    expect(mail).toContain(ADMIN_EMAIL);
    expect(mail).toContain('One pallet missing');

    // An agent token of the buyer reads the order like its key; another buyer's token does not.
    const tokenOf = async (account: Account): Promise<string> => {
      const issued = await call('/api/agent-tokens', { method: 'POST', apiKey: account.apiKey });
      expect(issued.status).toBe(201);
      return (issued.body as { token: string }).token;
    };
    const withToken = (token: string) =>
      marketplace.client.request(`/api/orders/${id}`, { headers: { 'x-agent-token': token } });
    expect(await withToken(await tokenOf(buyer))).toMatchObject({
      status: 200,
      body: { status: 'issue_reported' },
    });
    expect((await withToken(await tokenOf(otherBuyer))).status).toBe(404);

    const inbox = await invoke('seller_inbox_summarise', { window_hours: 72, limit: 5 }, seller.apiKey);
    expect(inbox.status).toBe(200);
    expect(inbox.body).toMatchObject({
      issues_reported: { items: [expect.objectContaining({ order_id: id })] },
    });
    expect((await invoke('seller_inbox_summarise', { window_hours: 169 }, seller.apiKey)).status).toBe(400);
  });

  /** The .eml file the mail worker kept whose Message-ID contains `key`, once it is there. */
  const mailWith = (key: string) =>
    eventually(() => mailText(marketplace.dataDir, key), {
      timeoutMs: 45_000,
      describe: () => `no mail ${key}:\n${marketplace.process.logs}`,
    });
  const admin = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    marketplace.client.request(path, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${init.token ?? marketplace.adminToken}`,
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  const stockOf = async (productId: string): Promise<number | undefined> =>
    ((await call(`/api/ucp/catalog/products/${productId}`)).body as { quantity_available?: number })
      .quantity_available;

  it('lists each account its own orders, and cancels before shipment: cancelled, stock back, both emailed', async () => {
    const productId = await publish({
      name: 'Larchmere cancelled chairs',
      price: 15,
      quantity: 20,
      instantCheckout: true,
    });
    const order = orderOf(await quickBuy(productId, 4, buyer));
    const id = order.order_id;

    // The seller learns of it at once: the inbox counts an order placed seconds ago.
    const inbox = await invoke('seller_inbox_summarise', { window_hours: 1, limit: 50 }, seller.apiKey);
    expect(inbox.body).toMatchObject({
      new_orders: { items: expect.arrayContaining([expect.objectContaining({ order_id: id })]) },
    });

    // Lists: the buyer's and the seller's own, never another account's.
    const mine = await invoke('list_my_orders', { status: 'awaiting_shipment', limit: 100 }, buyer.apiKey);
    expect((mine.body as { orders: OrderBody[] }).orders.map((o) => o.order_id)).toContain(id);
    const theirs = await call('/api/orders?limit=100', { apiKey: otherBuyer.apiKey });
    expect(theirs.status).toBe(200);
    expect((theirs.body as { orders: OrderBody[] }).orders.map((o) => o.order_id)).not.toContain(id);
    const sellers = await call('/api/seller/orders?status=awaiting_shipment&limit=100', {
      apiKey: seller.apiKey,
    });
    expect((sellers.body as { orders: OrderBody[] }).orders.map((o) => o.order_id)).toContain(id);
    const otherSellers = await invoke('get_seller_orders', { limit: 100 }, otherSeller.apiKey);
    expect((otherSellers.body as { orders: OrderBody[] }).orders.map((o) => o.order_id)).not.toContain(id);
    const badStatus = await call('/api/seller/orders?status=lost', { apiKey: seller.apiKey });
    expect(badStatus.status).toBe(400);
    expect(JSON.stringify(badStatus.body)).toContain('status');
    expect((await call('/api/orders', { apiKey: seller.apiKey })).status).toBe(403);
    // Paging: one at a time, the cursor leads on without repeats (a second order of this buyer's makes two pages).
    orderOf(await quickBuy(productId, 1, buyer));
    const first = await call('/api/orders?limit=1', { apiKey: buyer.apiKey });
    const { next_cursor: cursor } = first.body as { next_cursor: string | null };
    expect(cursor).toEqual(expect.any(String));
    const second = await call(`/api/orders?limit=1&cursor=${cursor ?? ''}`, { apiKey: buyer.apiKey });
    expect((second.body as { orders: OrderBody[] }).orders[0]?.order_id).toBeLessThan(
      (first.body as { orders: OrderBody[] }).orders[0]?.order_id ?? 0,
    );

    // Another account cannot cancel it; the buyer can (no body needed), and a replay answers the same.
    expect(
      (await call(`/api/orders/${id}/cancel`, { method: 'POST', apiKey: otherBuyer.apiKey })).status,
    ).toBe(404);
    expect(
      (
        await call(`/api/seller/orders/${id}/cancel`, {
          method: 'POST',
          apiKey: otherSeller.apiKey,
          body: { reason: 'x' },
        })
      ).status,
    ).toBe(404);
    const cancelled = await call(`/api/orders/${id}/cancel`, { method: 'POST', apiKey: buyer.apiKey });
    expect(cancelled).toMatchObject({
      status: 200,
      body: { status: 'cancelled', cancellation: { by: 'buyer', reason: null } },
    });
    const replay = await invoke('cancel_order', { order_id: id }, buyer.apiKey);
    expect(replay).toMatchObject({ status: 200, body: { status: 'cancelled' } });
    expect((await invoke('get_order_status', { order_id: id }, buyer.apiKey)).body).toMatchObject({
      status: 'cancelled',
    });
    // 20 listed, 1 still bought by the second order.
    await eventually(async () => ((await stockOf(productId)) === 19 ? true : undefined), {
      timeoutMs: 30_000,
      describe: () => marketplace.process.logs,
    });
    expect(await mailWith(`order-${id}-cancelled-buyer@`)).toContain(`Order ${id} cancelled`);
    expect(await mailWith(`order-${id}-cancelled-seller@`)).toContain('Do not ship it');
    // Shipping a cancelled order is refused.
    const ship = await invoke('bulk_mark_shipped', { order_ids: [id] }, seller.apiKey);
    expect(ship.body).toMatchObject({ skipped: [{ order_id: id, reason: 'not_shippable' }] });

    // The seller who cannot fulfil cancels another; after shipment, cancelling is a 409.
    const second2 = orderOf(await quickBuy(productId, 2, buyer));
    const bySeller = await invoke(
      'seller_cancel_order',
      { order_id: second2.order_id, reason: 'Water damage in the warehouse' },
      seller.apiKey,
    );
    expect(bySeller.body).toMatchObject({
      status: 'cancelled',
      cancellation: { by: 'seller', reason: 'Water damage in the warehouse' },
    });
    expect(await mailWith(`order-${second2.order_id}-cancelled-buyer@`)).toContain('Water damage');
    const shipped = orderOf(await quickBuy(productId, 1, buyer));
    await invoke('bulk_mark_shipped', { order_ids: [shipped.order_id] }, seller.apiKey);
    expect(
      (
        await call(`/api/orders/${shipped.order_id}/cancel`, {
          method: 'POST',
          apiKey: buyer.apiKey,
          body: {},
        })
      ).status,
    ).toBe(409);
    expect(
      (await invoke('seller_cancel_order', { order_id: shipped.order_id, reason: 'x' }, seller.apiKey))
        .status,
    ).toBe(409);
  }, 120_000);

  it('confirms receipt early, and lets the operator resolve a dispute: resolved, both parties emailed', async () => {
    const productId = await publish({
      name: 'Wendlow disputed lamps',
      price: 25,
      quantity: 20,
      instantCheckout: true,
    });
    const deliver = async (quantity: number) => {
      const placed = orderOf(await quickBuy(productId, quantity, buyer));
      await invoke(
        'bulk_mark_shipped',
        { order_ids: [placed.order_id], tracking_number: 'T' },
        seller.apiKey,
      );
      const delivered = await call(`/api/seller/orders/${placed.order_id}/mark-delivered`, {
        method: 'POST',
        apiKey: seller.apiKey,
      });
      expect(delivered.status).toBe(200);
      return placed.order_id;
    };
    const confirmedId = await deliver(1);
    expect((await invoke('confirm_order', { order_id: confirmedId }, otherBuyer.apiKey)).status).toBe(404);
    expect((await invoke('confirm_order', { order_id: confirmedId }, buyer.apiKey)).body).toMatchObject({
      status: 'completed',
    });

    const id = await deliver(4); // total 10,000 cents
    await invoke(
      'open_dispute',
      { order_id: id, reason: 'damaged', description: 'Two lamps broken' },
      buyer.apiKey,
    );
    expect((await admin('/api/admin/disputes', { token: 'not-the-token' })).status).toBe(401);
    const open = await admin('/api/admin/disputes?status=open&limit=100');
    expect(open.status).toBe(200);
    expect((open.body as { orders: OrderBody[] }).orders.map((o) => o.order_id)).toContain(id);
    const resolve = (body: unknown) => admin(`/api/admin/disputes/${id}/resolve`, { method: 'POST', body });
    const tooMuch = await resolve({ resolution: 'partially_refunded', refund_amount: 10_001, note: 'Half' });
    expect(tooMuch.status).toBe(400);
    expect(JSON.stringify(tooMuch.body)).toContain('refund_amount');
    const noNote = await resolve({ resolution: 'rejected' });
    expect(noNote.status).toBe(400);
    expect(JSON.stringify(noNote.body)).toContain('note');
    expect(
      (
        await admin(`/api/admin/disputes/${confirmedId}/resolve`, {
          method: 'POST',
          body: { resolution: 'rejected', note: 'n' },
        })
      ).status,
    ).toBe(409);
    const resolved = await resolve({
      resolution: 'partially_refunded',
      refund_amount: 5_000,
      note: 'Two of four broken.',
    });
    expect(resolved).toMatchObject({
      status: 200,
      body: { status: 'resolved', resolution: { resolution: 'partially_refunded', refund_amount: 5_000 } },
    });
    expect(
      (await resolve({ resolution: 'partially_refunded', refund_amount: 5_000, note: 'Two of four broken.' }))
        .status,
    ).toBe(200);
    expect((await resolve({ resolution: 'refunded', note: 'Changed my mind' })).status).toBe(409);
    expect((await invoke('get_order_status', { order_id: id }, buyer.apiKey)).body).toMatchObject({
      status: 'resolved',
      resolution: { note: 'Two of four broken.' },
    });
    const resolvedList = await admin('/api/admin/disputes?status=resolved&limit=100');
    expect((resolvedList.body as { orders: OrderBody[] }).orders.map((o) => o.order_id)).toContain(id);
    expect(await mailWith(`order-${id}-resolved-buyer@`)).toContain('Two of four broken.');
    expect(await mailWith(`order-${id}-resolved-seller@`)).toContain('Refund: 5000 USD cents.');
  }, 120_000);

  it("tells the seller of a new order, quote and dispute by a webhook signed with the endpoint's own secret", async () => {
    const [mine, theirs] = await Promise.all([WebhookReceiver.start(), WebhookReceiver.start()]);
    try {
      const register = (account: Account, url: string) =>
        call('/api/seller/webhooks', { method: 'POST', apiKey: account.apiKey, body: { url } });
      expect((await register(buyer, mine.url)).status).toBe(403);
      const badUrl = await register(seller, 'ftp://example.com/hook');
      expect(badUrl.status).toBe(400);
      expect(JSON.stringify(badUrl.body)).toContain('url');
      const registered = await register(seller, mine.url);
      expect(registered.status).toBe(201);
      const { id: endpointId, secret } = registered.body as { id: string; secret: string };
      expect(secret).toMatch(/^whsec_/);
      const other = await register(otherSeller, theirs.url);
      const otherSecret = (other.body as { secret: string }).secret;
      expect(otherSecret).not.toBe(secret);

      const productId = await publish({
        name: 'Harrowgate webhook vases',
        price: 12,
        quantity: 30,
        instantCheckout: true,
      });
      const order = orderOf(await quickBuy(productId, 2, buyer));
      const delivered = (type: string, key: string) =>
        eventually(
          async () =>
            mine.received.find(
              (hook) => hook.headers['x-marketplace-event'] === type && hook.body.includes(key),
            ),
          { timeoutMs: 30_000, describe: () => `no ${type} webhook:\n${marketplace.process.logs}` },
        );
      const placed = await delivered('order.placed', `"order_id":${order.order_id}`);
      // The signature verifies against this endpoint's secret, and against no other.
      const header = String(placed.headers['x-marketplace-signature']);
      const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? [];
      const sign = (key: string) => createHmac('sha256', key).update(`${t}.${placed.body}`).digest();
      expect(timingSafeEqual(sign(secret), Buffer.from(v1 ?? '', 'hex'))).toBe(true);
      expect(sign(otherSecret).equals(Buffer.from(v1 ?? '', 'hex'))).toBe(false);
      // And by email.
      expect(await mailWith(`order-${order.order_id}-placed-seller@`)).toContain(
        `New order ${order.order_id}`,
      );
      expect(JSON.parse(placed.body)).toMatchObject({
        id: placed.headers['x-marketplace-delivery'],
        type: 'order.placed',
        data: { order_id: order.order_id, product_id: productId, quantity: 2, total: 2_400 },
      });

      // The quote service learns the listing from its event.
      const quote = await eventually(
        async () => {
          const answer = await call('/api/ucp/quotes', {
            method: 'POST',
            apiKey: buyer.apiKey,
            body: { product_id: productId, quantity: 500, buyer: { email: 'q@buyer.example' } },
          });
          return answer.status === 201 ? answer : undefined;
        },
        { timeoutMs: 15_000, describe: () => marketplace.process.logs },
      );
      const quoteId = (quote.body as { quote_request_id: number }).quote_request_id;
      await delivered('quote.requested', `"quote_request_id":${quoteId}`);

      await invoke('bulk_mark_shipped', { order_ids: [order.order_id] }, seller.apiKey);
      await call(`/api/seller/orders/${order.order_id}/mark-delivered`, {
        method: 'POST',
        apiKey: seller.apiKey,
      });
      await invoke(
        'open_dispute',
        { order_id: order.order_id, reason: 'damaged', description: 'Chipped' },
        buyer.apiKey,
      );
      await delivered('order.disputed', `"order_id":${order.order_id}`);
      // Another seller's endpoint hears nothing of this seller's order.
      expect(theirs.received.filter((hook) => hook.body.includes(`"order_id":${order.order_id}`))).toEqual(
        [],
      );

      const listed = await call('/api/seller/webhooks', { apiKey: seller.apiKey });
      expect(listed.body).toMatchObject({
        webhooks: [
          {
            id: endpointId,
            url: mine.url,
            recent_deliveries: expect.arrayContaining([
              expect.objectContaining({ subject: `order.placed:${order.order_id}`, status: 'delivered' }),
            ]),
          },
        ],
      });
      expect(JSON.stringify(listed.body)).not.toContain('whsec_');
      expect(
        (await call(`/api/seller/webhooks/${endpointId}`, { method: 'DELETE', apiKey: otherSeller.apiKey }))
          .status,
      ).toBe(404);
      expect(
        (await call(`/api/seller/webhooks/${endpointId}`, { method: 'DELETE', apiKey: seller.apiKey }))
          .status,
      ).toBe(204);
      expect((await call('/api/seller/webhooks', { apiKey: seller.apiKey })).body).toEqual({ webhooks: [] });
    } finally {
      await Promise.all([mine.close(), theirs.close()]);
    }
  }, 120_000);
});
