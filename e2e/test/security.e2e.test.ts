import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '../src/harness/processes.js';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';

/**
 * The OWASP API Security Top 10 (2023) as tests against the gateway of `pnpm start` (docs/security.md maps each
 * item to its tests, these and those of the quote, order and saved-search suites).
 */
type Answer = { status: number; body: unknown; headers: Headers };

/** The gateway's headersTimeout (services/gateway/src/gateway.service.ts) plus its 1 s connection check. */
const HEADERS_DEADLINE_MS = 10_000 + 1_000;

describe('OWASP API Security Top 10 (2023) at the gateway', () => {
  let marketplace: E2eMarketplace;
  let alice: { accountId: number; apiKey: string };
  let bob: { accountId: number; apiKey: string };
  let buyer: { accountId: number; apiKey: string };
  /** Alice's listings: one promoted, one hidden from everyone but her. */
  let promoted: string;
  let hidden: string;
  /** A trickling client started first, so that the deadline passes while the other tests run. */
  let slowClient: Promise<{ closedAfterMs: number; answer: string }>;

  const call = (path: string, init: RequestInit = {}): Promise<Answer> =>
    marketplace.client.request(path, init);
  const json = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const asSeller = (key: string): Record<string, string> => ({ 'x-mcp-api-key': key });
  /** Calls each operation with the headers: every answer must have the status. */
  const expectEach = async (
    operations: readonly [string, string, unknown][],
    headers: Record<string, string>,
    status: number,
  ): Promise<void> => {
    for (const [method, path, body] of operations) {
      const answer = await call(path, body === undefined ? { method, headers } : json(method, body, headers));
      expect({ method, path, headers, status: answer.status }).toEqual({ method, path, headers, status });
    }
  };
  const details = async (productId: string, key?: string): Promise<Answer> =>
    call(`/api/ucp/catalog/products/${productId}`, { headers: key ? asSeller(key) : {} });
  const listing = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    name,
    description: 'Security suite stock',
    imageUrl: marketplace.images.imageUrl('security'),
    price: 12,
    quantity: 30,
    ...extra,
  });

  beforeAll(async () => {
    marketplace = await sharedMarketplace();
    slowClient = trickleHeaders(new URL(marketplace.client.baseUrl));
    slowClient.catch(() => undefined); // awaited by its test; handled here so it never goes unhandled
    alice = await marketplace.client.createAccount('seller', 'Alice Security');
    bob = await marketplace.client.createAccount('seller', 'Bob Security');
    buyer = await marketplace.client.createAccount('buyer', 'Bea Security');
    const published = await marketplace.client.publish(
      alice.apiKey,
      listing('Halberd promoted lot', { promotePublicly: true }),
    );
    const unlisted = await marketplace.client.publish(alice.apiKey, listing('Halberd hidden lot'));
    expect([published.status, unlisted.status]).toEqual([201, 201]);
    promoted = published.body.id;
    hidden = unlisted.body.id;
    // The catalog shows a listing once its projection applied it: the tests compare its answers before and after.
    for (const id of [promoted, hidden]) {
      await eventually(async () => ((await details(id, alice.apiKey)).status === 200 ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 50,
        describe: () => `${id} in the catalog`,
      });
    }
  }, 240_000);

  afterAll(async () => {
    await marketplace?.stop();
  }, 60_000);

  describe('API1 broken object level authorization', () => {
    it("answers another seller's listing id with the 404 of a missing one on every listing operation, changing nothing", async () => {
      const before = await details(promoted, alice.apiKey);
      const missingId = 'product_987654321';
      // The operations of docs/specification.md, "Ids in paths", with and without a version to match.
      const operations = (id: string): [string, string, RequestInit][] => [
        ['GET', `/api/products/${id}`, { headers: asSeller(bob.apiKey) }],
        ['PUT', `/api/products/${id}`, json('PUT', { price: 1 }, asSeller(bob.apiKey))],
        [
          'PUT If-Match',
          `/api/products/${id}`,
          json('PUT', { price: 1 }, { ...asSeller(bob.apiKey), 'if-match': '"1"' }),
        ],
        [
          'PATCH quantity',
          `/api/products/${id}/quantity`,
          json('PATCH', { quantity: 0 }, asSeller(bob.apiKey)),
        ],
        [
          'PUT shipping',
          `/api/products/${id}/shipping`,
          json('PUT', { mode: 'included' }, asSeller(bob.apiKey)),
        ],
        ['DELETE', `/api/products/${id}`, { method: 'DELETE', headers: asSeller(bob.apiKey) }],
        [
          'DELETE If-Match',
          `/api/products/${id}`,
          { method: 'DELETE', headers: { ...asSeller(bob.apiKey), 'if-match': '"9"' } },
        ],
        ['relist', `/api/products/${id}/relist`, { method: 'POST', headers: asSeller(bob.apiKey) }],
      ];
      for (const target of [promoted, hidden]) {
        const missing = operations(missingId);
        for (const [index, [operation, path, init]] of operations(target).entries()) {
          const theirs = await call(path, init);
          const none = await call(missing[index]![1], missing[index]![2]);
          expect({ operation, target, status: theirs.status }).toEqual({ operation, target, status: 404 });
          expect(theirs.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          // Word for word a missing listing's answer: nothing tells Bob the listing exists.
          expect(JSON.stringify(theirs.body).replaceAll(target, missingId)).toBe(JSON.stringify(none.body));
        }
      }
      const bulk = await call(
        '/api/products/bulk-update-price',
        json('POST', { productIds: [promoted, hidden], mode: 'price_set', value: 100 }, asSeller(bob.apiKey)),
      );
      expect(bulk.status).toBe(200);
      expect(bulk.body).toMatchObject({
        updated: [],
        failures: [
          { product_id: promoted, reason: 'not_found', message: `listing ${promoted} does not exist` },
          { product_id: hidden, reason: 'not_found', message: `listing ${hidden} does not exist` },
        ],
      });
      const moq = await call(
        '/api/products/bulk-update-moq',
        json('POST', { productIds: [promoted], minOrderQuantity: 25 }, asSeller(bob.apiKey)),
      );
      expect(moq.body).toMatchObject({
        updated: [],
        failures: [{ product_id: promoted, reason: 'not_found' }],
      });
      const after = await details(promoted, alice.apiKey);
      expect(after.body).toEqual(before.body);
    });

    it('shows a hidden listing to its seller only: 404 for another seller, a buyer and anonymous callers', async () => {
      expect((await details(hidden, alice.apiKey)).status).toBe(200);
      expect((await details(hidden, bob.apiKey)).status).toBe(404);
      expect((await details(hidden, buyer.apiKey)).status).toBe(404);
      expect((await details(hidden)).status).toBe(404);
    });
  });

  describe('API2 broken authentication', () => {
    it('refuses missing, malformed and revoked keys with 401 on every seller operation', async () => {
      const revoked = await marketplace.client.createAccount('seller', 'Revoked Security');
      const prefix = revoked.apiKey.split('_').slice(0, 2).join('_');
      const revocation = await call(`/api/admin/api-keys/${prefix}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${marketplace.adminToken}` },
      });
      expect(revocation.status).toBe(204);
      const credentials: Record<string, string>[] = [
        {},
        asSeller('lmk_notakey'),
        asSeller(`${alice.apiKey}x`),
        asSeller(revoked.apiKey),
      ];
      for (const headers of credentials) await expectEach(sellerOperations(promoted), headers, 401);
    });

    it('refuses a tampered agent token with 401', async () => {
      const issued = await call('/api/agent-tokens', { method: 'POST', headers: asSeller(buyer.apiKey) });
      expect(issued.status).toBe(201);
      const { token } = issued.body as { token: string };
      const tampered = token.replace(/^[^.]+/, 'forgedsession');
      const answer = await call(`/api/ucp/catalog/products/${promoted}`, {
        headers: { 'x-agent-token': tampered },
      });
      expect(answer.status).toBe(401);
    });
  });

  describe('API3 broken object property level authorization (mass assignment)', () => {
    it('rejects fields a seller may not set on create, naming each, and creates nothing', async () => {
      const smuggled = {
        id: 'product_1',
        productId: 'product_1',
        sellerId: bob.accountId,
        sellerAccountId: bob.accountId,
        seller_account_id: bob.accountId,
        stock: 5,
        quantity_available: 5,
        version: 7,
        status: 'sold_out',
      };
      const answer = await call(
        '/api/products',
        json('POST', listing('Smuggled lot', smuggled), asSeller(alice.apiKey)),
      );
      expect(answer.status).toBe(400);
      const paths = (answer.body as { errors: { path: string }[] }).errors.map((error) => error.path);
      expect(paths.sort()).toEqual(Object.keys(smuggled).sort());
    });

    it('rejects an update that sets the seller, the id or an unknown field, leaving the listing as it was', async () => {
      const before = await details(promoted, alice.apiKey);
      // `quantity` is the seller's own to set on PUT (docs/specification.md, "Listings"); these are not.
      for (const field of [
        { sellerId: bob.accountId },
        { sellerAccountId: bob.accountId },
        { id: 'product_999' },
        { stock: 0 },
      ]) {
        const answer = await call(`/api/products/${promoted}`, json('PUT', field, asSeller(alice.apiKey)));
        expect({ field, status: answer.status }).toEqual({ field, status: 400 });
        expect((answer.body as { errors: { path: string }[] }).errors.map((error) => error.path)).toEqual(
          Object.keys(field),
        );
      }
      expect((await details(promoted, alice.apiKey)).body).toEqual(before.body);
    });

    it('rejects fields a caller may not set on quote, checkout, order and subscription bodies, naming each', async () => {
      const pathsOf = (answer: Answer): string[] =>
        ((answer.body as { errors?: { path: string }[] }).errors ?? []).map((error) => error.path).sort();
      const quoteRequests = async (): Promise<number> =>
        (
          (
            await call(
              '/api/mcp/invoke',
              json(
                'POST',
                { tool: 'get_quote_requests', parameters: { status: 'all' } },
                asSeller(alice.apiKey),
              ),
            )
          ).body as { total: number }
        ).total;
      const subscriptions = async (): Promise<number> =>
        (
          (await call('/api/subscriptions', { headers: asSeller(buyer.apiKey) })).body as {
            subscriptions: unknown[];
          }
        ).subscriptions.length;
      const [quotesBefore, subscriptionsBefore] = [await quoteRequests(), await subscriptions()];
      const attempts: [string, string, unknown, Record<string, string>, string[]][] = [
        [
          'quote',
          '/api/ucp/quotes',
          {
            product_id: promoted,
            quantity: 40,
            buyer: { email: 'bea@example.com', account_id: bob.accountId },
            status: 'accepted',
            agreed_price: 1,
            buyer_account_id: bob.accountId,
            seller_account_id: bob.accountId,
          },
          asSeller(buyer.apiKey),
          ['agreed_price', 'buyer/account_id', 'buyer_account_id', 'seller_account_id', 'status'],
        ],
        [
          'checkout',
          '/api/ucp/checkout',
          {
            line_items: [{ product_id: promoted, quantity: 1, unit_price: 1 }],
            buyer: { email: 'bea@example.com', account_id: bob.accountId },
            status: 'completed',
            totals: { subtotal: 1, total: 1 },
          },
          asSeller(buyer.apiKey),
          ['buyer/account_id', 'line_items/0/unit_price', 'status', 'totals'],
        ],
        [
          'dispute',
          '/api/orders/1/dispute',
          { reason: 'damaged', description: 'Crushed pallet', status: 'completed', refund_cents: 100 },
          asSeller(buyer.apiKey),
          ['refund_cents', 'status'],
        ],
        [
          'shipping',
          '/api/seller/orders/1/mark-shipped',
          { tracking_number: '1Z', status: 'delivered', buyer_account_id: bob.accountId },
          asSeller(alice.apiKey),
          ['buyer_account_id', 'status'],
        ],
        [
          'subscription',
          '/api/subscriptions',
          {
            query: { search: 'halberd' },
            channels: [{ type: 'mcp_resource', owner_account_id: bob.accountId }],
            id: 'sub_000000000000000000000001',
            owner_account_id: bob.accountId,
            unsubscribe_token: 'chosen',
          },
          asSeller(buyer.apiKey),
          ['channels/0/owner_account_id', 'id', 'owner_account_id', 'unsubscribe_token'],
        ],
      ];
      for (const [what, path, body, headers, smuggled] of attempts) {
        const answer = await call(path, json('POST', body, headers));
        expect({ what, status: answer.status, paths: pathsOf(answer) }).toEqual({
          what,
          status: 400,
          paths: smuggled,
        });
      }
      expect([await quoteRequests(), await subscriptions()]).toEqual([quotesBefore, subscriptionsBefore]);
    });

    it('keeps private account data out of public product details', async () => {
      const answer = await details(promoted);
      expect(answer.status).toBe(200);
      const text = JSON.stringify(answer.body);
      expect(text).not.toMatch(/@example\.com|api_key|lmk_|email/i);
    });
  });

  describe('API4 unrestricted resource consumption', () => {
    it('answers 413 to a body over the limit', async () => {
      const answer = await call(
        '/api/products',
        json('POST', listing('Huge lot', { description: 'x'.repeat(300 * 1024) }), asSeller(alice.apiKey)),
      );
      expect(answer.status).toBe(413);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    it('bounds arrays: at most 8 gallery images and 200 ids per bulk call', async () => {
      const gallery = await call(
        '/api/products',
        json(
          'POST',
          listing('Gallery lot', {
            galleryImageUrls: Array.from({ length: 9 }, () => marketplace.images.imageUrl('g')),
          }),
          asSeller(alice.apiKey),
        ),
      );
      expect(gallery.status).toBe(400);
      const ids = Array.from({ length: 201 }, (_, n) => `product_${n + 1}`);
      for (const [path, body] of [
        ['/api/products/bulk-update-price', { productIds: ids, mode: 'price_set', value: 100 }],
        ['/api/products/bulk-update-moq', { productIds: ids, minOrderQuantity: 2 }],
      ] as const) {
        const answer = await call(path, json('POST', body, asSeller(alice.apiKey)));
        expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      }
    });

    it('refuses out-of-range page sizes instead of clamping them', async () => {
      for (const query of ['limit=101', 'limit=0', 'limit=-1', 'limit=1e9', 'offset=-1', 'limit=abc']) {
        const answer = await call(`/api/ucp/catalog/products?${query}`);
        expect({ query, status: answer.status }).toEqual({ query, status: 400 });
      }
    });

    it(
      'cuts off a client that trickles its headers (slowloris) within the headers timeout',
      async () => {
        const { closedAfterMs, answer } = await slowClient;
        expect(answer).toMatch(/^HTTP\/1\.1 408|^reset$/);
        expect(closedAfterMs).toBeLessThan(HEADERS_DEADLINE_MS + 3_000);
      },
      HEADERS_DEADLINE_MS + 10_000,
    );
  });

  describe('API5 broken function level authorization', () => {
    it('keeps seller operations from buyers (403)', async () => {
      await expectEach(sellerOperations(promoted), asSeller(buyer.apiKey), 403);
    });

    it('keeps the admin API from callers without the admin token (401), whatever else they hold', async () => {
      const wrong: Record<string, string>[] = [
        {},
        { authorization: `Bearer ${marketplace.adminToken}x` },
        { authorization: `Bearer ${alice.apiKey}` },
        { authorization: `Basic ${Buffer.from(`admin:${marketplace.adminToken}`).toString('base64')}` },
        asSeller(alice.apiKey),
        { 'x-mcp-api-key': marketplace.adminToken },
      ];
      const operations: [string, string, unknown][] = [
        ['POST', '/api/admin/accounts', { role: 'seller', name: 'Mallory', email: 'mallory@example.com' }],
        ['POST', `/api/admin/accounts/${alice.accountId}/api-keys`, {}],
        ['DELETE', `/api/admin/api-keys/${alice.apiKey.split('_').slice(0, 2).join('_')}`, undefined],
      ];
      for (const headers of wrong) await expectEach(operations, headers, 401);
      // Alice's key still works: none of the refused calls revoked it.
      expect((await details(hidden, alice.apiKey)).status).toBe(200);
    });

    it("keeps the seller's order operations from buyers (403) and anonymous callers (401), and the buyer's from sellers", async () => {
      // The role is checked before the order is looked up: no order needs to exist for these answers.
      const sellerSide: [string, string, unknown][] = [
        ['GET', '/api/seller/orders/1', undefined],
        ['POST', '/api/seller/orders/1/mark-shipped', { tracking_number: '1Z' }],
        ['POST', '/api/seller/orders/1/mark-delivered', undefined],
      ];
      const buyerSide: [string, string, unknown][] = [
        ['GET', '/api/orders/1', undefined],
        ['POST', '/api/orders/1/confirm', undefined],
        ['POST', '/api/orders/1/dispute', { reason: 'damaged', description: 'Crushed pallet' }],
        ['POST', '/api/ucp/checkout', { line_items: [{ product_id: promoted, quantity: 1 }] }],
      ];
      await expectEach(sellerSide, asSeller(buyer.apiKey), 403);
      await expectEach(sellerSide, {}, 401);
      await expectEach(buyerSide, asSeller(alice.apiKey), 403);
    });

    it('issues agent tokens to buyers only', async () => {
      const answer = await call('/api/agent-tokens', { method: 'POST', headers: asSeller(alice.apiKey) });
      expect(answer.status).toBe(403);
    });
  });

  describe('API7 server side request forgery (image URLs)', () => {
    let redirector: Server;
    let redirectorOrigin: string;

    beforeAll(async () => {
      // On 127.0.0.1, which the test marketplace allow-lists: its redirects are what the guard must judge.
      redirector = createServer((req, res) => {
        const target = new URL(req.url ?? '/', 'http://unused').searchParams.get('to') ?? '';
        res.writeHead(302, { location: target }).end();
      });
      redirector.listen(0, '127.0.0.1');
      await once(redirector, 'listening');
      redirectorOrigin = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    });

    afterAll(() => {
      redirector.closeAllConnections();
      redirector.close();
    });

    const imageServerPort = (): string => new URL(marketplace.images.origin).port;
    const refusedPaths = async (imageUrl: string, gallery: string[] = []): Promise<string[]> => {
      const answer = await marketplace.client.publish(
        alice.apiKey,
        listing('Probe lot', { imageUrl, galleryImageUrls: gallery }),
      );
      expect({ imageUrl, status: answer.status }).toEqual({ imageUrl, status: 400 });
      return (answer.body as unknown as { errors: { path: string; message: string }[] }).errors
        .filter((error) => /does not fetch from/.test(error.message))
        .map((error) => error.path);
    };

    it('refuses private, loopback, link-local and other non-public addresses, however they are written', async () => {
      const port = imageServerPort();
      const before = marketplace.images.requests();
      for (const host of [
        '10.0.0.1',
        '172.16.0.1',
        '192.168.1.1',
        '100.64.0.1',
        '169.254.169.254',
        '127.0.0.2',
        '0.0.0.0',
        '[::1]',
        '[fd00::1]',
        '[fe80::1]',
        '[::ffff:127.0.0.2]',
        '[::ffff:a9fe:a9fe]',
        '2130706434', // 127.0.0.2 as one number
        '0x7f.0.0.2',
      ]) {
        expect(await refusedPaths(`http://${host}:${port}/images/security.png`)).toEqual(['imageUrl']);
      }
      expect(
        await refusedPaths(marketplace.images.imageUrl('security'), [
          `http://169.254.169.254/latest/meta-data`,
        ]),
      ).toEqual(['galleryImageUrls/0']);
      expect(marketplace.images.requests()).toBe(before + 1);
    });

    it('checks every redirect: an allowed host redirecting to a private or metadata address is refused', async () => {
      const port = imageServerPort();
      for (const target of [
        `http://127.0.0.2:${port}/images/security.png`,
        'http://169.254.169.254/latest/meta-data',
        `http://[::1]:${port}/images/security.png`,
      ]) {
        const url = `${redirectorOrigin}/?to=${encodeURIComponent(target)}`;
        expect(await refusedPaths(url)).toEqual(['imageUrl']);
      }
    });

    it('refuses schemes other than http and https', async () => {
      for (const imageUrl of ['file:///etc/passwd', 'gopher://127.0.0.1:70/', 'ftp://127.0.0.1/x.png']) {
        const answer = await marketplace.client.publish(alice.apiKey, listing('Scheme lot', { imageUrl }));
        expect({ imageUrl, status: answer.status }).toEqual({ imageUrl, status: 400 });
      }
    });
  });

  describe('API7 server side request forgery (webhook URLs)', () => {
    it('refuses a webhook at a non-public address when subscribing, naming the channel', async () => {
      // 127.0.0.1 is allow-listed for the test receivers; every other non-public address is refused.
      for (const url of [
        'http://169.254.169.254/latest/meta-data',
        'http://10.0.0.1/hook',
        'http://[::1]/hook',
        'http://[fd00::1]/hook',
        'http://[::ffff:a9fe:a9fe]/hook',
        'http://0x7f.0.0.2/hook',
      ]) {
        const answer = await call(
          '/api/subscriptions',
          json('POST', {
            query: {},
            channels: [
              { type: 'email', email: 'bea@example.com' },
              { type: 'webhook', url },
            ],
          }),
        );
        const paths = ((answer.body as { errors?: { path: string }[] }).errors ?? []).map(
          (error) => error.path,
        );
        expect({ url, status: answer.status, paths }).toEqual({
          url,
          status: 400,
          paths: ['channels/1/url'],
        });
      }
    });
  });

  describe('hostile input (never a 5xx)', () => {
    const NUL = 'x\u0000y';
    const LONE_SURROGATE = 'x\ud800y';
    /** Each stored text field as its route names it; all were 500s from PostgreSQL before the edge refused them. */
    const restCases = (bad: string): [string, string, unknown, string][] => [
      ['POST', '/api/products', listing(bad), 'name'],
      ['PUT', `/api/products/${promoted}`, { description: bad }, 'description'],
      [
        'POST',
        '/api/ucp/quotes',
        { product_id: promoted, quantity: 60, buyer: { email: 'q@example.com', name: bad } },
        'buyer/name',
      ],
      [
        'POST',
        '/api/ucp/checkout',
        {
          line_items: [{ product_id: promoted, quantity: 1 }],
          buyer: { email: 'c@example.com', company: bad },
        },
        'buyer/company',
      ],
      ['POST', '/api/orders/1/dispute', { reason: 'damaged', description: bad }, 'description'],
      ['POST', '/api/seller/orders/1/mark-shipped', { tracking_number: bad }, 'tracking_number'],
      [
        'POST',
        '/api/subscriptions',
        { query: { search: bad }, channels: [{ type: 'mcp_resource' }] },
        'query/search',
      ],
      ['POST', '/api/admin/accounts', { role: 'buyer', name: bad, email: 'n@example.com' }, 'name'],
    ];
    const toolCases = (bad: string): [string, Record<string, unknown>, string][] => [
      [
        'request_quote',
        { product_id: promoted, quantity: 60, buyer_email: 'q@example.com', message: bad },
        'message',
      ],
      ['respond_to_quote', { quote_request_id: 1, action: 'decline', message: bad }, 'message'],
      [
        'quick_buy',
        { product_id: promoted, quantity: 1, buyer_email: 'q@example.com', buyer_name: bad },
        'buyer_name',
      ],
      [
        'subscribe_to_query',
        { query: { search: bad }, channels: [{ type: 'mcp_resource' }] },
        'query/search',
      ],
      ['bulk_mark_shipped', { orders: [{ order_id: 1, carrier_name: bad }] }, 'orders/0/carrier_name'],
      ['create_listing', { name: bad }, 'name'],
    ];
    const headersFor = (path: string): Record<string, string> =>
      path.startsWith('/api/admin')
        ? { authorization: `Bearer ${marketplace.adminToken}` }
        : path.includes('/seller/') || path.startsWith('/api/products')
          ? asSeller(alice.apiKey)
          : asSeller(buyer.apiKey);

    it.each([
      ['a NUL', NUL, 'NUL'],
      ['a lone surrogate', LONE_SURROGATE, 'lone surrogate'],
    ])(
      'answers 400 naming the field for %s in any stored text, on REST and tools',
      async (_name, bad, reason) => {
        for (const [method, path, body, field] of restCases(bad)) {
          const answer = await call(path, json(method, body, headersFor(path)));
          expect({ path, status: answer.status, body: answer.body }).toMatchObject({
            path,
            status: 400,
            body: {
              errors: expect.arrayContaining([{ path: field, message: expect.stringContaining(reason) }]),
            },
          });
        }
        for (const [tool, parameters, field] of toolCases(bad)) {
          const key = ['respond_to_quote', 'bulk_mark_shipped', 'create_listing'].includes(tool)
            ? alice
            : buyer;
          const answer = await call(
            '/api/mcp/invoke',
            json('POST', { tool, parameters }, asSeller(key.apiKey)),
          );
          expect({ tool, status: answer.status, body: answer.body }).toMatchObject({
            tool,
            status: 400,
            body: {
              errors: expect.arrayContaining([
                { path: `parameters/${field}`, message: expect.stringContaining(reason) },
              ]),
            },
          });
        }
      },
    );

    it('stores right-to-left and combining marks as the text they are', async () => {
      const name = 'קומקום\u200f e\u0301 a\u0308';
      const published = await marketplace.client.publish(
        alice.apiKey,
        listing(name, { promotePublicly: true }),
      );
      expect(published.status).toBe(201);
      // The seller's own read is read-your-writes; the public catalog shows the listing once it has projected it.
      expect(
        (await call(`/api/products/${published.body.id}`, { headers: asSeller(alice.apiKey) })).body,
      ).toMatchObject({ title: name });
      const shown = await eventually(
        async () => {
          const answer = await details(published.body.id);
          return answer.status === 200 ? answer : undefined;
        },
        { timeoutMs: 15_000, describe: () => marketplace.logs() },
      );
      expect(shown.body).toMatchObject({ title: name });
    });

    // docs/specification.md, "Ids in paths": of the right form but naming nothing (beyond 2^53 − 1 too) is
    // 404; not of the form at all, 400 naming id.
    it('answers 404 to an id beyond 2^53 in any path, 400 to one not of its form, and 400 to JSON nested 2,000 deep', async () => {
      const beyond: [string, string, typeof buyer][] = [
        ['GET', '/api/orders/9007199254740993', buyer],
        ['POST', '/api/orders/99999999999999999999/confirm', buyer],
        ['GET', '/api/seller/orders/9999999999999999', alice],
        ['POST', '/api/seller/orders/9007199254740993/mark-delivered', alice],
        ['GET', '/api/ucp/quotes/9007199254740993', buyer],
        ['PUT', '/api/products/product_9007199254740993', alice],
        ['PATCH', '/api/products/product_9007199254740993/quantity', alice],
        ['GET', '/api/ucp/catalog/products/product_9007199254740993', alice],
      ];
      for (const [method, path, key] of beyond) {
        const answer = await call(path, {
          method,
          headers: { 'content-type': 'application/json', ...asSeller(key.apiKey) },
          ...(method === 'GET'
            ? {}
            : { body: JSON.stringify(path.endsWith('quantity') ? { quantity: 1 } : {}) }),
        });
        expect({ method, path, status: answer.status }).toEqual({ method, path, status: 404 });
      }
      for (const path of ['/api/orders/12ab', '/api/seller/orders/-1', '/api/ucp/quotes/0x10']) {
        const key = path.includes('/seller/') ? alice : buyer;
        const answer = await call(path, { headers: asSeller(key.apiKey) });
        expect({ path, status: answer.status }).toEqual({ path, status: 400 });
        expect(answer.body).toMatchObject({ errors: [{ path: 'id' }] });
      }
      const deep = `${'['.repeat(2_000)}${']'.repeat(2_000)}`;
      for (const path of ['/api/ucp/quotes', '/api/subscriptions', '/api/mcp/invoke']) {
        const answer = await call(path, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: deep,
        });
        expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      }
    });

    it('marks private answers Cache-Control: no-store: hidden listings, orders, subscriptions and their tokens', async () => {
      const subscribed = await call(
        '/api/subscriptions',
        json(
          'POST',
          { query: { search: 'halberd' }, channels: [{ type: 'mcp_resource' }] },
          asSeller(buyer.apiKey),
        ),
      );
      expect(subscribed.status).toBe(201);
      const answers: [string, Answer][] = [
        ['hidden listing', await details(hidden, alice.apiKey)],
        ['subscription', subscribed],
        ['subscriptions', await call('/api/subscriptions', { headers: asSeller(buyer.apiKey) })],
        ['order', await call('/api/orders/1', { headers: asSeller(buyer.apiKey) })],
        [
          'search with a key',
          await call('/api/ucp/catalog/products?q=halberd', { headers: asSeller(alice.apiKey) }),
        ],
      ];
      for (const [what, answer] of answers) {
        expect({ what, cacheControl: answer.headers.get('cache-control') }).toEqual({
          what,
          cacheControl: 'no-store',
        });
      }
    });
  });

  describe('API8 security misconfiguration', () => {
    it('sends the security headers on every answer: successes, problems, unknown routes and wrong methods', async () => {
      const answers: [string, Answer][] = [
        ['200 liveness', await call('/healthz')],
        ['200 search', await call('/api/ucp/catalog/products?q=halberd')],
        ['200 details', await details(promoted)],
        [
          '201 publish',
          await call('/api/products', json('POST', listing('Header lot'), asSeller(alice.apiKey))),
        ],
        [
          '400 malformed JSON',
          await call('/api/products', {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...asSeller(alice.apiKey) },
            body: '{"name":',
          }),
        ],
        ['401 no key', await call('/api/products', json('POST', listing('No key lot')))],
        [
          '403 buyer',
          await call('/api/products', json('POST', listing('Buyer lot'), asSeller(buyer.apiKey))),
        ],
        ['404 unknown route', await call('/no/such/route')],
        ['404 unknown product', await details('product_999999')],
        ['404 unknown image', await call(`/images/${'0'.repeat(64)}.png`)],
        ['405 wrong method', await call('/api/products', { method: 'GET' })],
        [
          '413 large body',
          await call('/api/products', json('POST', { name: 'x'.repeat(300 * 1024) }, asSeller(alice.apiKey))),
        ],
        [
          '415 not JSON',
          await call('/api/products', {
            method: 'POST',
            headers: { 'content-type': 'text/plain', ...asSeller(alice.apiKey) },
            body: 'name',
          }),
        ],
      ];
      for (const [what, answer] of answers) {
        const headers = Object.fromEntries(
          [
            'x-content-type-options',
            'x-frame-options',
            'content-security-policy',
            'referrer-policy',
            'strict-transport-security',
            'cross-origin-opener-policy',
            'x-powered-by',
          ].map((name) => [name, answer.headers.get(name)]),
        );
        expect({ what, headers }).toEqual({
          what,
          headers: {
            'x-content-type-options': 'nosniff',
            'x-frame-options': 'DENY',
            'content-security-policy': expect.stringContaining("default-src 'none'"),
            'referrer-policy': 'no-referrer',
            'strict-transport-security': expect.stringMatching(/^max-age=\d+/),
            'cross-origin-opener-policy': 'same-origin',
            'x-powered-by': null,
          },
        });
      }
    });

    it('answers errors as problem documents that leak no stack, SQL or internal addresses', async () => {
      const errors = [
        await call('/api/products', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...asSeller(alice.apiKey) },
          body: '{"name":',
        }),
        await call(
          '/api/products/product_1/quantity',
          json('PATCH', { quantity: 'lots' }, asSeller(alice.apiKey)),
        ),
        await call('/api/products/%E0%A4%A', json('PUT', {}, asSeller(alice.apiKey))),
        await call('/api/ucp/catalog/products/product_99999999999999999999'),
      ];
      for (const answer of errors) {
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(answer.status).toBeLessThan(500);
        expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(JSON.stringify(answer.body)).not.toMatch(
          /\bat \S+\.(?:js|ts):\d+|stack|select |postgres|127\.0\.0\.1:\d+/i,
        );
      }
    });
  });

  describe('API9 improper inventory management', () => {
    it('serves exactly the methods /openapi.json documents on each of its paths', async () => {
      // The other half, that every route the gateway serves is documented, is the gateway's route-inventory test.
      const document = (await call('/openapi.json')).body as {
        paths: Record<string, Record<string, unknown>>;
      };
      const paths = Object.entries(document.paths);
      expect(paths.length).toBeGreaterThan(30);
      for (const [path, operations] of paths) {
        // OPTIONS reaches each route's own handler, which lists its methods; the 404 fallback would answer 404.
        const answer = await call(path.replace(/\{\w+\}/g, '1'), { method: 'OPTIONS' });
        const allowed = (answer.headers.get('allow') ?? '')
          .split(/,\s*/)
          .filter((method) => method !== '' && method !== 'HEAD' && method !== 'OPTIONS');
        expect({ path, status: answer.status, allowed: allowed.sort() }).toEqual({
          path,
          status: 204,
          allowed: Object.keys(operations)
            .map((method) => method.toUpperCase())
            .sort(),
        });
      }
    });
  });
});

/** Every seller REST operation, with a body it would accept from the listing's owner. */
const sellerOperations = (productId: string): [string, string, unknown][] => [
  ['POST', '/api/products', { name: 'Seller op lot', description: 'x', price: 3, quantity: 2 }],
  ['PUT', `/api/products/${productId}`, { price: 2 }],
  ['PATCH', `/api/products/${productId}/quantity`, { quantity: 3 }],
  ['POST', '/api/products/bulk-update-price', { productIds: [productId], mode: 'price_set', value: 200 }],
  ['POST', '/api/products/bulk-update-moq', { productIds: [productId], minOrderQuantity: 1 }],
];

/**
 * Slowloris: opens a connection and sends one header line a second without ever ending the headers. Resolves
 * with when the server ended the connection and what it answered (`reset` when reset before any answer).
 */
const trickleHeaders = async (base: URL): Promise<{ closedAfterMs: number; answer: string }> => {
  const socket: Socket = connect(Number(base.port), base.hostname);
  await once(socket, 'connect');
  const started = Date.now();
  let answer = '';
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString();
  });
  socket.write(`GET /healthz HTTP/1.1\r\nHost: ${base.host}\r\n`);
  let line = 0;
  const trickle = setInterval(() => {
    if (!socket.destroyed) socket.write(`X-Trickle-${line++}: 1\r\n`);
  }, 1_000);
  // The server may reset rather than close (it answers 408 while lines are still arriving): both end it.
  let reset = false;
  socket.on('error', () => {
    reset = true;
  });
  await new Promise((resolve) => socket.once('close', resolve));
  clearInterval(trickle);
  return { closedAfterMs: Date.now() - started, answer: reset && answer === '' ? 'reset' : answer };
};
