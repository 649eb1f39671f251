import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';
import { mailText } from '../src/harness/mail-store.js';
import { eventually } from '../src/harness/processes.js';

interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Headers;
}

/**
 * Quote requests through the gateway (docs/specification.md, "Catalog endpoints" requestQuote, 4.3 request_quote, get_quote_requests,
 * respond_to_quote; docs/specification.md, "Quotes"): anonymous, API key and agent token callers, the seller's tools, the
 * emails in the `.eml` store, and the anonymous rate limits with small allowances.
 */
describe('quote requests (embedded mode)', () => {
  let marketplace: EmbeddedMarketplace;
  let seller: { accountId: number; apiKey: string };
  let otherSeller: { accountId: number; apiKey: string };
  let buyer: { accountId: number; apiKey: string };
  let productId: string;

  const quote = (body: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
    marketplace.client.request('/api/ucp/quotes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const invoke = (tool: string, parameters: unknown, apiKey?: string): Promise<Answer> =>
    marketplace.client.request('/api/mcp/invoke', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-mcp-api-key': apiKey } : {}) },
      body: JSON.stringify({ tool, parameters }),
    });
  const anonymousQuote = (email: string, product = productId) =>
    quote({ product_id: product, quantity: 50, buyer: { email } });
  const mail = (messageIdPart: string) =>
    eventually(() => mailText(marketplace.dataDir, messageIdPart), {
      timeoutMs: 15_000,
      describe: () => `no mail ${messageIdPart}:\n${marketplace.process.logs}`,
    });

  beforeAll(async () => {
    marketplace = await EmbeddedMarketplace.start({
      env: {
        RATE_LIMIT_QUOTES_PER_IP: '6',
        RATE_LIMIT_QUOTES_PER_EMAIL: '2',
        RATE_LIMIT_QUOTES_PER_KEY: '100',
      },
    });
    seller = await marketplace.client.createAccount('seller', 'Quote Seller');
    otherSeller = await marketplace.client.createAccount('seller', 'Other Seller');
    buyer = await marketplace.client.createAccount('buyer', 'Quote Buyer');
    const published = await marketplace.client.publish(seller.apiKey, {
      name: 'Pallet of Brindlecove cordless drills',
      description: 'Overstock, boxed, 120 units',
      imageUrl: marketplace.images.imageUrl('drills'),
      price: 45,
      quantity: 120,
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    productId = published.body.id;
    // The quote service learns listings from their events; a keyed request (its own allowance) waits for that.
    await eventually(
      async () => {
        const answer = await quote(
          { product_id: productId, quantity: 500, buyer: { email: 'warmup@buyer.example' } },
          { 'x-mcp-api-key': buyer.apiKey },
        );
        return answer.status === 201 ? answer : undefined;
      },
      { timeoutMs: 15_000, describe: () => marketplace.process.logs },
    );
  }, 300_000);

  afterAll(async () => {
    await marketplace?.stop();
  });

  it('takes an anonymous request above the stock: 201 with the decided body, and emails the seller', async () => {
    const answer = await anonymousQuote('ada@buyer.example');
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({
      quote_request_id: expect.any(Number),
      claim_token: expect.stringMatching(/^qct_[\w-]{43}$/),
      status: 'pending',
      product_id: productId,
      quantity: 50,
      exceeds_available_stock: false,
      expected_response: '24-48 hours',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
    });
    const id = (answer.body as { quote_request_id: number }).quote_request_id;
    const sellerMail = await mail(`quote-request.${id}.requested@`);
    expect(sellerMail).toContain('To: quote.seller@example.com');
    expect(sellerMail).toContain('ada@buyer.example');
  });

  it('answers 400 naming each invalid field, 404 for an unknown product, 401 for a bad key', async () => {
    const invalid = await quote({ product_id: 'drill', quantity: 0, buyer: { email: 'nope' }, extra: 1 });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const paths = (invalid.body as { errors: { path: string }[] }).errors.map(({ path }) => path).sort();
    expect(paths).toEqual(['buyer/email', 'extra', 'product_id', 'quantity']);
    expect((await anonymousQuote('bob@buyer.example', 'product_999999')).status).toBe(404);
    expect(
      (
        await quote(
          { product_id: productId, quantity: 1, buyer: { email: 'x@y.example' } },
          { 'x-mcp-api-key': 'lmk_bogus' },
        )
      ).status,
    ).toBe(401);
  });

  it('binds a request made with an API key or an agent token to the buyer account', async () => {
    const keyed = await quote(
      { product_id: productId, quantity: 500, buyer: { email: 'buyer@example.com' } },
      { 'x-mcp-api-key': buyer.apiKey },
    );
    expect(keyed.status).toBe(201);
    expect(keyed.body).toMatchObject({ exceeds_available_stock: true });
    const issued = await marketplace.client.request('/api/agent-tokens', {
      method: 'POST',
      headers: { 'x-mcp-api-key': buyer.apiKey },
    });
    expect(issued.status).toBe(201);
    const { token } = issued.body as { token: string };
    const tokened = await quote(
      { product_id: productId, quantity: 7, buyer: { email: 'buyer@example.com' }, target_price: 4_000 },
      { 'x-agent-token': token },
    );
    expect(tokened.status).toBe(201);
    const listed = await invoke('get_quote_requests', { status: 'pending' }, seller.apiKey);
    expect(listed.status).toBe(200);
    const requests = (
      listed.body as { quote_requests: { quote_request_id: number; buyer_verified: boolean }[] }
    ).quote_requests;
    const ids = [keyed, tokened].map(
      (answer) => (answer.body as { quote_request_id: number }).quote_request_id,
    );
    for (const id of ids)
      expect(requests.find((request) => request.quote_request_id === id)?.buyer_verified).toBe(true);
    expect(
      (
        await quote(
          { product_id: productId, quantity: 1, buyer: { email: 'x@y.example' } },
          { 'x-agent-token': `${token}x` },
        )
      ).status,
    ).toBe(401);
  });

  it('lets only the owning seller see and answer a request, once, and emails the buyer', async () => {
    const asked = await quote(
      {
        product_id: productId,
        quantity: 300,
        buyer: { email: 'carol@buyer.example', name: 'Carol' },
        target_price: 4_000,
      },
      { 'x-mcp-api-key': buyer.apiKey },
    );
    const id = (asked.body as { quote_request_id: number }).quote_request_id;

    expect((await invoke('get_quote_requests', {})).status).toBe(401);
    expect((await invoke('get_quote_requests', {}, buyer.apiKey)).status).toBe(403);
    const others = await invoke('get_quote_requests', { status: 'all' }, otherSeller.apiKey);
    expect(others.body).toEqual({ quote_requests: [], total: 0 });
    expect(
      (await invoke('respond_to_quote', { quote_request_id: id, action: 'accept' }, otherSeller.apiKey))
        .status,
    ).toBe(404);
    const noPrice = await invoke(
      'respond_to_quote',
      { quote_request_id: id, action: 'counter' },
      seller.apiKey,
    );
    expect(noPrice.status).toBe(400);
    expect(noPrice.body).toMatchObject({ errors: [{ path: 'parameters/counter_price' }] });

    const countered = await invoke(
      'respond_to_quote',
      { quote_request_id: id, action: 'counter', counter_price: 4_200, message: 'Pallets of 100 only' },
      seller.apiKey,
    );
    expect(countered.status).toBe(200);
    expect(countered.body).toMatchObject({ quote_request_id: id, status: 'responded', agreed_price: 4_200 });
    const again = await invoke('respond_to_quote', { quote_request_id: id, action: 'accept' }, seller.apiKey);
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.body)).toContain('already answered');

    const responded = await invoke('get_quote_requests', { status: 'responded' }, seller.apiKey);
    expect(
      (responded.body as { quote_requests: { quote_request_id: number }[] }).quote_requests.map(
        (q) => q.quote_request_id,
      ),
    ).toContain(id);
    const buyerMail = await mail(`quote-request.${id}.responded@`);
    // A buyer key files under the account's own address, not the one its body named.
    expect(buyerMail).toContain('To: quote.buyer@example.com');
    expect(buyerMail).toContain('$42.00 per unit');
  });

  it('limits anonymous requests per buyer email and per client IP, with Retry-After and RateLimit headers', async () => {
    // Earlier tests spent 2 of the IP's 6 (one 201, one 404); an invalid request spends nothing.
    expect((await anonymousQuote('dora@buyer.example')).status).toBe(201);
    const second = await anonymousQuote('DORA@buyer.example');
    expect(second.status).toBe(201);
    expect(second.headers.get('ratelimit-limit')).toBe('2');
    expect(second.headers.get('ratelimit-remaining')).toBe('0');
    const perEmail = await anonymousQuote('dora@buyer.example');
    expect(perEmail.status).toBe(429);
    expect(perEmail.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(Number(perEmail.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(perEmail.headers.get('ratelimit-policy')).toBe('2;w=3600');

    expect((await anonymousQuote('erin@buyer.example')).status).toBe(201);
    const perIp = await anonymousQuote('fay@buyer.example');
    expect(perIp.status).toBe(429);
    expect(perIp.headers.get('ratelimit-limit')).toBe('6');
    // A key has its own, larger allowance.
    const keyed = await quote(
      { product_id: productId, quantity: 1, buyer: { email: 'fay@buyer.example' } },
      { 'x-mcp-api-key': buyer.apiKey },
    );
    expect(keyed.status).toBe(201);
    expect(keyed.headers.get('ratelimit-limit')).toBe('100');
  });
});
