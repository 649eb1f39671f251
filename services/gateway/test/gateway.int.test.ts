import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { ADMIN_TOKEN, CapturedLog, TestGateway, type Answer, backendsAt } from './support/gateway-harness.js';
import { FAULTY_PRODUCT_ID, InMemoryBackends } from './support/in-memory-backends.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const listing = {
  name: 'Pallet of Zephyrtone earbuds',
  description: 'Customer returns, tested',
  price: 12.5,
};

/** An RFC 9457 document with the given status. */
const expectProblem = (answer: Answer, status: number): Record<string, unknown> => {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ status, type: expect.any(String), title: expect.any(String) });
  return answer.body as Record<string, unknown>;
};

describe.each(testEngines())('gateway HTTP API on $name', ({ create }) => {
  let db: Database;
  let backends: InMemoryBackends;
  let gateway: TestGateway;
  let seller: { accountId: number; apiKey: string };
  let buyer: { accountId: number; apiKey: string };

  beforeAll(async () => {
    db = await create();
    // The backends log into the same capture, so the check that no key is logged covers them too.
    const log = new CapturedLog();
    backends = await InMemoryBackends.start(log.logger);
    gateway = await TestGateway.start(
      db,
      {
        services: backendsAt(backends.address),
        adminToken: ADMIN_TOKEN,
        publicBaseUrl: 'https://market.test',
      },
      log,
    );
    seller = await gateway.createAccount('seller');
    buyer = await gateway.createAccount('buyer');
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backends?.stop();
    await db?.close();
  });

  it('keeps an idle connection 65 s and says so, longer than the 60 s idle timeout of common load balancers', async () => {
    const answer = await gateway.call('/healthz');
    expect(answer.headers.get('keep-alive')).toBe('timeout=65');
  });

  describe('admin API', () => {
    it('opens an account with a first key, shown once and never cached', async () => {
      const answer = await gateway.postJson(
        '/api/admin/accounts',
        {
          role: 'seller',
          name: 'Tarnwick Ltd',
          email: 'ops@tarnwick.test',
          company: 'Tarnwick',
          country: 'gb',
        },
        admin,
      );
      expect(answer.status).toBe(201);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.body).toEqual({
        account_id: expect.any(Number),
        role: 'seller',
        api_key: expect.stringMatching(/^lmk_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/),
        api_key_prefix: expect.stringMatching(/^lmk_[a-z2-7]{8}$/),
      });
      const { account_id: accountId } = answer.body as { account_id: number };
      expect(accountId).toBeGreaterThan(buyer.accountId);
    });

    it('refuses a missing or wrong admin token with 401', async () => {
      const body = { role: 'buyer', name: 'n', email: 'n@example.test' };
      const attempts: Record<string, string>[] = [
        {},
        { authorization: 'Bearer wrong-token' },
        { authorization: ADMIN_TOKEN },
      ];
      for (const headers of attempts) {
        const answer = await gateway.postJson('/api/admin/accounts', body, headers);
        expectProblem(answer, 401);
        expect(answer.headers.get('www-authenticate')).toContain('Bearer');
      }
      expectProblem(await gateway.call('/api/admin/api-keys/lmk_aaaaaaaa', { method: 'DELETE' }), 401);
    });

    it('validates the account, naming each field', async () => {
      const answer = await gateway.postJson(
        '/api/admin/accounts',
        { role: 'admin', email: 'x', country: 'XX' },
        admin,
      );
      const problem = expectProblem(answer, 400);
      expect((problem['errors'] as { path: string }[]).map(({ path }) => path).sort()).toEqual([
        'country',
        'email',
        'name',
        'role',
      ]);
    });

    it('issues more keys to an account; each works on its own', async () => {
      const answer = await gateway.call(`/api/admin/accounts/${seller.accountId}/api-keys`, {
        method: 'POST',
        headers: admin,
      });
      expect(answer.status).toBe(201);
      const second = answer.body as { account_id: number; role: string; api_key: string };
      expect(second).toMatchObject({ account_id: seller.accountId, role: 'seller' });
      expect(second.api_key).not.toBe(seller.apiKey);
      const published = await gateway.postJson('/api/products', listing, { 'x-mcp-api-key': second.api_key });
      expect(published.status).toBe(201);
    });

    it('answers 404 for keys of unknown accounts and unknown prefixes', async () => {
      expectProblem(
        await gateway.call('/api/admin/accounts/999999/api-keys', { method: 'POST', headers: admin }),
        404,
      );
      expectProblem(
        await gateway.call('/api/admin/accounts/abc/api-keys', { method: 'POST', headers: admin }),
        404,
      );
      expectProblem(
        await gateway.call('/api/admin/api-keys/lmk_aaaaaaaa', { method: 'DELETE', headers: admin }),
        404,
      );
      expectProblem(
        await gateway.call('/api/admin/api-keys/not-a-prefix', { method: 'DELETE', headers: admin }),
        404,
      );
    });

    it('revokes a key at once, leaving the account’s other keys working', async () => {
      const account = await gateway.createAccount('seller', 'revocable seller');
      const issued = await gateway.call(`/api/admin/accounts/${account.accountId}/api-keys`, {
        method: 'POST',
        headers: admin,
      });
      const other = (issued.body as { api_key: string }).api_key;
      const prefix = account.apiKey.split('_').slice(0, 2).join('_');
      expect(
        (await gateway.postJson('/api/products', listing, { 'x-mcp-api-key': account.apiKey })).status,
      ).toBe(201);

      const revoked = await gateway.call(`/api/admin/api-keys/${prefix}`, {
        method: 'DELETE',
        headers: admin,
      });
      expect(revoked.status).toBe(204);
      expectProblem(
        await gateway.postJson('/api/products', listing, { 'x-mcp-api-key': account.apiKey }),
        401,
      );
      expect((await gateway.postJson('/api/products', listing, { 'x-mcp-api-key': other })).status).toBe(201);
      // Revoking again is harmless.
      expect(
        (await gateway.call(`/api/admin/api-keys/${prefix}`, { method: 'DELETE', headers: admin })).status,
      ).toBe(204);
    });
  });

  describe('POST /api/products', () => {
    it('creates a listing for a seller: 201, Location, the details shape, dollars sent as cents', async () => {
      const answer = await gateway.postJson(
        '/api/products',
        { ...listing, quantity: 200, condition: 'customer_returns', promotePublicly: true },
        { 'x-mcp-api-key': seller.apiKey },
      );
      expect(answer.status).toBe(201);
      const created = answer.body as { id: string };
      expect(answer.headers.get('location')).toBe(
        `https://market.test/api/ucp/catalog/products/${created.id}`,
      );
      expect(answer.body).toMatchObject({
        id: expect.stringMatching(/^product_[0-9]+$/),
        title: listing.name,
        price: 1250,
        currency: 'USD',
        availability: 'in_stock',
        quantity_available: 200,
        condition: 'customer_returns',
        pricing: { unit_price: 1250 },
        seller: { account_id: seller.accountId },
        promote_publicly: true,
        url: `https://market.test/api/ucp/catalog/products/${created.id}`,
      });
      expect(backends.createRequests.at(-1)).toMatchObject({
        actor: { kind: 'seller', id: String(seller.accountId) },
        sellerAccountId: seller.accountId,
        draft: { name: listing.name, priceCents: 1250, quantity: 200, promotePublicly: true },
        correlationId: expect.any(String),
      });
    });

    it('answers 401 without a key, with a malformed key and with an unknown key', async () => {
      const unknownKey = seller.apiKey.slice(0, -4) + 'AAAA';
      const attempts: Record<string, string>[] = [
        {},
        { 'x-mcp-api-key': 'hunter2' },
        { 'x-mcp-api-key': unknownKey },
      ];
      for (const headers of attempts) {
        expectProblem(await gateway.postJson('/api/products', listing, headers), 401);
      }
    });

    it('answers 403 to a buyer key', async () => {
      expectProblem(await gateway.postJson('/api/products', listing, { 'x-mcp-api-key': buyer.apiKey }), 403);
    });

    it('answers 400 naming every invalid field, before calling the listing service', async () => {
      const before = backends.createRequests.length;
      const answer = await gateway.postJson(
        '/api/products',
        { name: '', price: 'free', galleryImageUrls: Array(9).fill('https://img.test/a.jpg'), colour: 'red' },
        { 'x-mcp-api-key': seller.apiKey },
      );
      const problem = expectProblem(answer, 400);
      expect((problem['errors'] as { path: string }[]).map(({ path }) => path).sort()).toEqual([
        'colour',
        'description',
        'galleryImageUrls',
        'name',
        'price',
      ]);
      expect(backends.createRequests).toHaveLength(before);
    });

    it('passes the listing service’s own violations through as a 400', async () => {
      const answer = await gateway.postJson(
        '/api/products',
        { ...listing, price: -3 },
        { 'x-mcp-api-key': seller.apiKey },
      );
      expect(expectProblem(answer, 400)['errors']).toEqual([
        { path: 'price', message: 'must be greater than 0' },
      ]);
    });

    it('answers 400 for malformed JSON, 415 for another media type and 413 for an oversized body', async () => {
      const key = { 'x-mcp-api-key': seller.apiKey };
      const malformed = await gateway.call('/api/products', {
        method: 'POST',
        headers: { ...key, 'content-type': 'application/json' },
        body: '{"name": "unterminated',
      });
      expect(expectProblem(malformed, 400)['type']).toBe('https://market.test/problems/malformed-json');
      for (const body of ['42', 'null', '"a listing"', '[]']) {
        const notAnObject = await gateway.call('/api/products', {
          method: 'POST',
          headers: { ...key, 'content-type': 'application/json' },
          body,
        });
        expect(expectProblem(notAnObject, 400)['errors']).toEqual([
          { path: '(root)', message: expect.any(String) },
        ]);
      }
      const mediaTypes: Record<string, string>[] = [{ 'content-type': 'text/plain' }, {}];
      for (const headers of mediaTypes) {
        const answer = await gateway.call('/api/products', {
          method: 'POST',
          headers: { ...key, ...headers },
          body: '{}',
        });
        expectProblem(answer, 415);
      }
      const charset = await gateway.call('/api/products', {
        method: 'POST',
        headers: { ...key, 'content-type': 'application/json; charset=latin1' },
        body: '{}',
      });
      expectProblem(charset, 415);
      const huge = await gateway.postJson(
        '/api/products',
        { ...listing, description: 'x'.repeat(300_000) },
        key,
      );
      expectProblem(huge, 413);
    });
  });

  describe('catalog', () => {
    let promotedId: string;
    let hiddenId: string;

    beforeAll(async () => {
      const key = { 'x-mcp-api-key': seller.apiKey };
      const promoted = await gateway.postJson(
        '/api/products',
        {
          name: 'Quillmarsh office chairs',
          description: 'Boxed',
          price: 40,
          quantity: 30,
          promotePublicly: true,
        },
        key,
      );
      promotedId = (promoted.body as { id: string }).id;
      const hidden = await gateway.postJson(
        '/api/products',
        { name: 'Quillmarsh private lot', description: 'x' },
        key,
      );
      hiddenId = (hidden.body as { id: string }).id;
    });

    it("lists categories with display names and the catalog's public, in-stock counts", async () => {
      const answer = await gateway.call('/api/ucp/catalog/categories');

      expect(answer.status).toBe(200);
      const { categories } = answer.body as {
        categories: { id: string; name: string; product_count: number }[];
      };
      expect(categories.find(({ id }) => id === 'electronics')).toEqual({
        id: 'electronics',
        name: 'Electronics',
        product_count: expect.any(Number),
      });
      expect(categories.every(({ product_count }) => product_count > 0)).toBe(true);
      expectProblem(await gateway.call('/api/ucp/catalog/categories', { method: 'POST' }), 405);
    });

    it('searches anonymously, answering exactly products and pagination with docs/specification.md, "Products and pagination" products', async () => {
      const answer = await gateway.call('/api/ucp/catalog/products?q=quillmarsh&limit=1');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        products: [
          {
            id: promotedId,
            title: 'Quillmarsh office chairs',
            description: 'Boxed',
            price: 4000,
            currency: 'USD',
            availability: 'in_stock',
            quantity_available: 30,
            images: [],
            url: `https://market.test/api/ucp/catalog/products/${promotedId}`,
          },
        ],
        pagination: { total: 1, limit: 1, offset: 0, has_more: false },
      });
    });

    it('pages by offset and says when more remain', async () => {
      const page = await gateway.call('/api/ucp/catalog/products?limit=1&offset=0');
      const { pagination } = page.body as { pagination: { total: number; has_more: boolean } };
      expect(pagination.total).toBeGreaterThan(1);
      expect(pagination.has_more).toBe(true);
    });

    it.each([
      ['limit=101', 'limit'],
      ['limit=0', 'limit'],
      ['offset=-1', 'offset'],
      ['category=furniture', 'category'],
      ['condition=mint', 'condition'],
      ['min_price=abc', 'min_price'],
      ['max_price=1.234', 'max_price'],
      ['limit=1&limit=2', 'limit'],
    ])('answers 400 for %s, naming %s', async (query, parameter) => {
      const problem = expectProblem(await gateway.call(`/api/ucp/catalog/products?${query}`), 400);
      expect(problem['errors']).toEqual([{ path: parameter, message: expect.any(String) }]);
    });

    it('shows details of a promoted listing to anyone', async () => {
      const answer = await gateway.call(`/api/ucp/catalog/products/${promotedId}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        id: promotedId,
        price: 4000,
        pricing: { unit_price: 4000, currency: 'USD' },
        category: 'electronics',
        seller: { account_id: seller.accountId },
        created_at: expect.stringMatching(/Z$/),
      });
    });

    it('hides a non-promoted listing from everyone but its seller', async () => {
      expectProblem(await gateway.call(`/api/ucp/catalog/products/${hiddenId}`), 404);
      const asBuyer = await gateway.call(`/api/ucp/catalog/products/${hiddenId}`, {
        headers: { 'x-mcp-api-key': buyer.apiKey },
      });
      expectProblem(asBuyer, 404);
      const asSeller = await gateway.call(`/api/ucp/catalog/products/${hiddenId}`, {
        headers: { 'x-mcp-api-key': seller.apiKey },
      });
      expect(asSeller.status).toBe(200);
    });

    it('answers 404 for malformed and unknown ids, and 401 for a bad key sent anyway', async () => {
      for (const id of ['abc', 'product_', 'product_0', 'product_12x', 'product_99999']) {
        expectProblem(await gateway.call(`/api/ucp/catalog/products/${id}`), 404);
      }
      expectProblem(
        await gateway.call(`/api/ucp/catalog/products/${promotedId}`, {
          headers: { 'x-mcp-api-key': 'lmk_nope' },
        }),
        401,
      );
    });

    it('answers a bare 500 for a real fault behind it, with no internals, and logs it', async () => {
      const problem = expectProblem(
        await gateway.call(`/api/ucp/catalog/products/${FAULTY_PRODUCT_ID}`),
        500,
      );
      expect(JSON.stringify(problem)).not.toMatch(/corrupted|var\/lib|stack/);
      expect(gateway.log.text).toContain('unexpected error while handling a request');
    });
  });

  describe('every answer', () => {
    it('is a problem document for unknown routes (404) and wrong methods (405 with Allow)', async () => {
      expectProblem(await gateway.call('/nowhere'), 404);
      expectProblem(await gateway.call('/api/products/oops/deeper'), 404);
      const wrongMethod = await gateway.call('/api/products', { method: 'DELETE' });
      expectProblem(wrongMethod, 405);
      expect(wrongMethod.headers.get('allow')).toBe('GET, POST, HEAD, OPTIONS');
      const options = await gateway.call('/api/ucp/catalog/products', { method: 'OPTIONS' });
      expect(options.status).toBe(204);
      expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      expectProblem(await gateway.call('/api/ucp/catalog/products', { method: 'DELETE' }), 405);
    });

    it('resolves problem types to their description', async () => {
      const answer = await gateway.call('/problems/validation-error');
      expect(answer.body).toMatchObject({
        type: 'https://market.test/problems/validation-error',
        status: 400,
      });
      expectProblem(await gateway.call('/problems/nonsense'), 404);
    });

    it('carries the security headers and no X-Powered-By, errors included', async () => {
      for (const answer of [
        await gateway.call('/healthz'),
        await gateway.call('/nowhere'),
        await gateway.call(`/api/ucp/catalog/products/${FAULTY_PRODUCT_ID}`),
      ]) {
        expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
        expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
        expect(answer.headers.get('x-frame-options')).toBe('DENY');
        expect(answer.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        expect(answer.headers.get('x-powered-by')).toBeNull();
        expect(answer.headers.get('x-request-id')).toBeTruthy();
      }
    });
  });

  describe('the log', () => {
    it('records requests by account id and never contains a key or the admin token', async () => {
      // Keys in headers, in a path by mistake, and in a body: none may reach the log.
      await gateway.call(`/api/admin/api-keys/${seller.apiKey}`, { method: 'DELETE', headers: admin });
      await gateway.postJson(
        '/api/products',
        { ...listing, sku: seller.apiKey },
        { 'x-mcp-api-key': seller.apiKey },
      );
      const text = gateway.log.text;
      expect(text).toContain(`"accountId":${seller.accountId}`);
      expect(text).toContain('"path":"/api/products"');
      // A key's secret part follows its 13-character prefix `lmk_xxxxxxxx_`.
      for (const secret of [seller.apiKey.slice(13), buyer.apiKey.slice(13), ADMIN_TOKEN]) {
        expect(text).not.toContain(secret);
      }
    });
  });
});
