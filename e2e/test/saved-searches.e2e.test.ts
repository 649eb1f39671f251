import { createHmac, createPublicKey, timingSafeEqual, verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';
import { mailFileNames } from '../src/harness/mail-store.js';
import { eventually } from '../src/harness/processes.js';
import { contentDigest, signatureBaseOf, verifiesRequestSignature } from '@marketplace/platform';
import { WebhookReceiver } from '../src/harness/webhook-receiver.js';
import type { SigningJwk } from '@marketplace/platform';

/** The marketplace's own key: it signs unsubscribe tokens; no receiver is given it. */
const SIGNING_SECRET = 'e2e-webhook-signing-secret-0123456789abcdef';

/**
 * The receiver's check, from the documented scheme only: HMAC-SHA256 hex over "<t>.<raw body>", any of the
 * `v1=` entries (two while a rotated-out secret still signs).
 */
const signatureValid = (header: unknown, rawBody: string, secret: string): boolean => {
  const fields = String(header)
    .split(',')
    .map((part) => part.split('=', 2) as [string, string]);
  const timestamp = fields.find(([name]) => name === 't')?.[1];
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  return fields
    .filter(([name]) => name === 'v1')
    .some(([, value]) => {
      const presented = Buffer.from(value, 'hex');
      return presented.length === expected.length && timingSafeEqual(presented, expected);
    });
};

/** How a receiver checks each JWA `alg` a UCP profile may list (UCP signatures): the hash, raw r‖s. */
const HASH_OF_ALG: Readonly<Record<string, string>> = { ES256: 'sha256', ES384: 'sha384' };

/**
 * A UCP receiver's check of an RFC 9421 signature, from the documented scheme only (docs/agents.md, "Signing
 * key"): Signature-Input names the covered components, `created` and the `keyid` of a key the profile lists,
 * and no `alg` (the verifier uses the one the profile lists for that key); every `required` component is
 * covered; the signature over the rebuilt base verifies with exactly that key and alg.
 */
const verifiesWithListedKey = (
  headers: Readonly<Record<string, string | string[] | undefined>>,
  derived: Readonly<Record<string, string>>,
  required: readonly string[],
  key: SigningJwk,
): boolean => {
  const input = /^sig1=(\(([^)]*)\);created=\d+;keyid="([^"]+)")$/.exec(String(headers['signature-input']));
  const signature = /^sig1=:([A-Za-z0-9+/=]+):$/.exec(String(headers['signature']));
  const hash = HASH_OF_ALG[key.alg];
  if (!input || !signature || hash === undefined || input[3] !== key.kid) return false;
  const names = input[2]!.split(' ').map((quoted) => quoted.slice(1, -1));
  if (required.some((name) => !names.includes(name))) return false;
  const base = signatureBaseOf(
    names.map((name) => [name, derived[name] ?? String(headers[name])]),
    input[1]!,
  );
  return verify(
    hash,
    Buffer.from(base),
    { key: createPublicKey({ key: { ...key }, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature[1]!, 'base64'),
  );
};

/** The story: an agent saves a search with three channels; a seller publishes a matching public lot. */
describe('saved searches (embedded mode)', () => {
  let marketplace: EmbeddedMarketplace;
  let receiver: WebhookReceiver;
  let sellerKey: string;
  let buyerKey: string;
  let otherBuyerKey: string;

  beforeAll(async () => {
    marketplace = await EmbeddedMarketplace.start({
      // One limit on (per mailbox), low, for the flooding test; every test's other channels name other inboxes.
      env: { WEBHOOK_SIGNING_SECRET: SIGNING_SECRET, RATE_LIMIT_SUBSCRIPTIONS_PER_EMAIL: '2' },
    });
    receiver = await WebhookReceiver.start();
    const admin = marketplace.client;
    sellerKey = (await admin.createAccount('seller', 'Saved Search Seller')).apiKey;
    buyerKey = (await admin.createAccount('buyer', 'Saved Search Agent')).apiKey;
    otherBuyerKey = (await admin.createAccount('buyer', 'Another Agent')).apiKey;
  }, 120_000);

  afterAll(async () => {
    await receiver?.close();
    await marketplace?.stop();
  });

  const post = (path: string, body: unknown, apiKey?: string) =>
    marketplace.client.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-mcp-api-key': apiKey } : {}) },
      body: JSON.stringify(body),
    });
  const get = (path: string, apiKey?: string) =>
    marketplace.client.request(path, { headers: apiKey ? { 'x-mcp-api-key': apiKey } : {} });

  /** The emails written to the `.eml` store (DATA_DIR/mail) to `address`, as text (quoted-printable undone). */
  const mailsTo = async (address: string): Promise<{ name: string; text: string }[]> => {
    const directory = join(marketplace.dataDir, 'mail');
    const names = await mailFileNames(marketplace.dataDir);
    const mails = await Promise.all(
      names.map(async (name) => ({
        name,
        text: (await readFile(join(directory, name), 'utf8'))
          .replace(/=\r?\n/g, '')
          .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      })),
    );
    return mails.filter(({ text }) =>
      new RegExp(`^To: ${address.replace(/[.+]/g, '\\$&')}\r?$`, 'im').test(text),
    );
  };
  /** The path and query of the link in the confirmation email to `address` (double opt-in). */
  const confirmationLinkTo = async (address: string): Promise<string> => {
    const mail = await eventually(
      async () => (await mailsTo(address)).find(({ name }) => name.includes('email-confirmation')),
      {
        timeoutMs: 15_000,
        describe: () => `no confirmation email to ${address}:\n${marketplace.process.logs}`,
      },
    );
    const link = /https?:\/\/[^/\s]+(\/api\/email-confirmation\?token=[^\s"<]+)/.exec(mail.text)?.[1];
    if (link === undefined) throw new Error(`no link in the confirmation email:\n${mail.text}`);
    return link;
  };
  const confirmAddress = async (address: string): Promise<void> => {
    const confirmed = await marketplace.client.request(await confirmationLinkTo(address), { method: 'POST' });
    expect(confirmed.status).toBe(200);
  };

  /** Publishes a public overstock lot and waits for the webhook delivered to subscription `id` about it. */
  const publishOverstockFor = async (id: string, name: string, price: number, quantity: number) => {
    const published = await marketplace.client.publish(sellerKey, {
      name,
      description: 'Overstock, sealed',
      imageUrl: marketplace.images.imageUrl('earbuds'),
      price,
      quantity,
      category: 'electronics',
      condition: 'overstock',
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    return eventually(async () => receiver.received.find(({ body }) => body.includes(id)), {
      timeoutMs: 15_000,
      describe: () => marketplace.process.logs,
    });
  };

  it('delivers a matching public lot once to the webhook, the email and the resource', async () => {
    const subscribed = await post(
      '/api/subscriptions',
      {
        query: {
          category: 'electronics',
          condition: 'customer_returns',
          maxPrice: 4_000,
          minQuantity: 500,
          sellerCountry: 'us',
          notes: 'kept but ignored',
        },
        channels: [
          { type: 'webhook', url: receiver.url },
          { type: 'email', email: 'agent@example.com' },
          { type: 'mcp_resource' },
        ],
      },
      buyerKey,
    );
    expect(subscribed.status).toBe(201);
    const subscription = subscribed.body as {
      id: string;
      resource_uri: string;
      unsubscribe_token: string;
      webhook_secret: string;
    };
    expect(subscription.webhook_secret).toMatch(/^whsec_/);
    expect(subscription.resource_uri).toBe(`marketplace://subscriptions/${subscription.id}`);
    // Double opt-in: the address receives matches once confirmed.
    await confirmAddress('agent@example.com');

    const lot = (name: string, price: number, promotePublicly = true) =>
      marketplace.client.publish(sellerKey, {
        name,
        description: 'Customer returns, tested, boxed',
        imageUrl: marketplace.images.imageUrl('earbuds'),
        price,
        quantity: 800,
        category: 'electronics',
        condition: 'customer_returns',
        promotePublicly,
      });
    expect((await lot('Too pricey speakers', 45)).status).toBe(201);
    expect((await lot('Private lot of earbuds', 30, false)).status).toBe(201);
    const matching = await lot('Pallet of Quillon earbuds', 35);
    expect(matching.status).toBe(201);

    const [webhook] = await eventually(
      async () => (receiver.received.length > 0 ? receiver.received : undefined),
      {
        timeoutMs: 15_000,
        describe: () => marketplace.process.logs,
      },
    );
    expect(webhook!.headers['x-marketplace-event']).toBe('saved_search.match');
    const signature = webhook!.headers['x-marketplace-signature'];
    // Signed with this subscription's own secret, shown once at creation; the marketplace's key is not it.
    expect(signatureValid(signature, webhook!.body, subscription.webhook_secret)).toBe(true);
    expect(signatureValid(signature, webhook!.body, SIGNING_SECRET)).toBe(false);
    // Also signed with the marketplace key (RFC 9421), found as a UCP platform finds it: the profile UCP-Agent
    // names, the key its signing_keys list under the signature's keyid.
    const profileUrl = /^profile="([^"]+)"$/.exec(String(webhook!.headers['ucp-agent']))![1]!;
    const profile = (await marketplace.client.request(new URL(profileUrl).pathname)).body as {
      signing_keys: SigningJwk[];
    };
    const keyid = /keyid="([^"]+)"/.exec(String(webhook!.headers['signature-input']))![1];
    const key = profile.signing_keys.find((candidate) => candidate.kid === keyid);
    expect(key).toBeDefined();
    expect(verifiesRequestSignature(webhook!, key!)).toBe(true);
    expect(verifiesRequestSignature({ ...webhook!, body: webhook!.body.replace('3500', '3400') }, key!)).toBe(
      false,
    );
    const payload = JSON.parse(webhook!.body) as { id: string; data: Record<string, unknown> };
    expect(payload.id).toBe(webhook!.headers['x-marketplace-delivery']);
    // The notification event's id, a UUIDv7 like every event id.
    expect(payload.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(payload.data).toMatchObject({
      subscription_id: subscription.id,
      query: { notes: 'kept but ignored' },
      product: { id: matching.body.id, price: 3_500, seller: { country: 'US' } },
    });

    const resource = await eventually(
      async () => {
        const { status, body } = await get(`/api/mcp/resources/subscriptions/${subscription.id}`, buyerKey);
        const view = body as { matches: unknown[]; deliveries: { status: string }[] };
        return status === 200 && view.deliveries.every((d) => d.status === 'delivered') ? view : undefined;
      },
      { timeoutMs: 10_000, describe: () => marketplace.process.logs },
    );
    expect(resource.matches).toEqual([
      { matched_at: expect.any(String), product: expect.objectContaining({ id: matching.body.id }) },
    ]);
    expect(resource.deliveries.map((d) => d.status)).toEqual(['delivered', 'delivered']);
    const mails = await mailFileNames(marketplace.dataDir);
    expect(mails.length).toBeGreaterThanOrEqual(1);
    // Exactly one webhook for one matching lot, even after the others were published.
    expect(receiver.received).toHaveLength(1);
  }, 60_000);

  describe('double opt-in of email channels', () => {
    const optInLot = (name: string) =>
      marketplace.client.publish(sellerKey, {
        name,
        description: 'Overstock, boxed',
        imageUrl: marketplace.images.imageUrl('earbuds'),
        price: 12,
        quantity: 60,
        promotePublicly: true,
      });
    type View = { id: string; channels: { type: string; email?: string; status?: string }[] };
    /** The subscription's resource once it holds `matches` matches. */
    const resourceWith = (id: string, matches: number) =>
      eventually(
        async () => {
          const { status, body } = await get(`/api/mcp/resources/subscriptions/${id}`, buyerKey);
          const view = body as {
            subscription: View;
            matches: unknown[];
            deliveries: { target: string; status: string }[];
          };
          return status === 200 && view.matches.length >= matches ? view : undefined;
        },
        { timeoutMs: 15_000, describe: () => marketplace.process.logs },
      );

    it('emails no match before the address is confirmed, and every later one after; one address confirmed is not another', async () => {
      const subscribeFor = async (email: string) => {
        const created = await post(
          '/api/subscriptions',
          { query: { search: 'zorblax' }, channels: [{ type: 'email', email }, { type: 'mcp_resource' }] },
          buyerKey,
        );
        expect(created.status).toBe(201);
        return created.body as View;
      };
      const mine = await subscribeFor('Opt.In+zorblax@Example.com');
      const other = await subscribeFor('other.optin@example.com');
      expect(mine.channels[0]).toEqual({
        type: 'email',
        email: 'Opt.In+zorblax@Example.com',
        status: 'pending_confirmation',
      });

      // A match before the confirmation: on the resource, not in the inbox.
      expect((await optInLot('Zorblax widgets, first lot')).status).toBe(201);
      expect((await resourceWith(mine.id, 1)).deliveries).toEqual([]);
      const link = await confirmationLinkTo('Opt.In+zorblax@Example.com');
      // A mail scanner following the link (twice) sees a page and confirms nothing.
      for (let visit = 0; visit < 2; visit++) {
        const page = await get(link);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        expect(page.body).toContain('<form method="post"');
      }
      const listed = async () =>
        Object.fromEntries(
          ((await get('/api/subscriptions', buyerKey)).body as { subscriptions: View[] }).subscriptions.map(
            (view) => [view.id, view.channels[0]?.status],
          ),
        );
      expect(await listed()).toMatchObject({ [mine.id]: 'pending_confirmation' });

      const confirmed = await marketplace.client.request(link, { method: 'POST' });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body).toEqual({ confirmed: true, mailbox: 'opt.in@example.com' });
      expect(confirmed.headers.get('cache-control')).toBe('no-store');
      expect(await listed()).toMatchObject({ [mine.id]: 'active', [other.id]: 'pending_confirmation' });

      expect((await optInLot('Zorblax widgets, second lot')).status).toBe(201);
      const after = await eventually(
        async () => {
          const view = await resourceWith(mine.id, 2);
          return view.deliveries.some((delivery) => delivery.status === 'delivered') ? view : undefined;
        },
        { timeoutMs: 15_000, describe: () => marketplace.process.logs },
      );
      expect(after.deliveries.map((delivery) => delivery.target)).toEqual(['Opt.In+zorblax@Example.com']);
      const matchMails = (await mailsTo('Opt.In+zorblax@Example.com')).filter(({ name }) =>
        name.includes('saved-search'),
      );
      expect(matchMails).toHaveLength(1);
      expect(matchMails[0]?.text).toContain('Zorblax widgets, second lot');
      // The other address, never confirmed, got both matches on its resource and no match email.
      expect((await resourceWith(other.id, 2)).deliveries).toEqual([]);
      expect(
        (await mailsTo('other.optin@example.com')).filter(({ name }) => name.includes('saved-search')),
      ).toEqual([]);
    }, 90_000);

    it('refuses a forged or replayed confirmation token, naming the token', async () => {
      const created = await post('/api/subscriptions', {
        query: { search: 'quibbleworth' },
        channels: [{ type: 'email', email: 'forged.optin@example.com' }],
      });
      expect(created.status).toBe(201);
      const link = await confirmationLinkTo('forged.optin@example.com');
      const token = decodeURIComponent(link.split('token=')[1] ?? '');
      const [payload, signature] = token.split('.') as [string, string];
      // Another mailbox under this link's signature, a changed signature, garbage, no token at all.
      const otherMailbox = Buffer.from(JSON.stringify(['victim@example.com', 'x'])).toString('base64url');
      for (const forged of [
        `${otherMailbox}.${signature}`,
        `${payload}.${signature.slice(0, -2)}AA`,
        'junk',
      ]) {
        const refused = await marketplace.client.request(
          `/api/email-confirmation?token=${encodeURIComponent(forged)}`,
          { method: 'POST' },
        );
        expect(refused.status).toBe(400);
        expect(refused.body).toMatchObject({ errors: [expect.objectContaining({ path: 'token' })] });
      }
      const missing = await marketplace.client.request('/api/email-confirmation', { method: 'POST' });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ errors: [expect.objectContaining({ path: 'token' })] });
      expect((await marketplace.client.request(link, { method: 'POST' })).status).toBe(200);
      // Single use: the same link again is a 409.
      expect((await marketplace.client.request(link, { method: 'POST' })).status).toBe(409);
    });
  });

  it('shows the resource to its owner only and refuses bad input naming the field', async () => {
    const created = await post(
      '/api/subscriptions',
      { query: {}, channels: [{ type: 'mcp_resource' }] },
      buyerKey,
    );
    const id = (created.body as { id: string }).id;
    expect((await get(`/api/mcp/resources/subscriptions/${id}`)).status).toBe(401);
    expect((await get(`/api/mcp/resources/subscriptions/${id}`, otherBuyerKey)).status).toBe(404);
    expect((await get(`/api/mcp/resources/subscriptions/${id}`, buyerKey)).status).toBe(200);

    const anonymousResource = await post('/api/subscriptions', {
      query: {},
      channels: [{ type: 'mcp_resource' }],
    });
    expect(anonymousResource.status).toBe(400);
    expect(anonymousResource.body).toMatchObject({ errors: [{ path: 'channels/0/type' }] });
    const badRange = await post(
      '/api/subscriptions',
      { query: { minPrice: 500, maxPrice: 100 }, channels: [{ type: 'webhook', url: 'ftp://x.example' }] },
      buyerKey,
    );
    expect(badRange.status).toBe(400);
    expect((badRange.body as { errors: { path: string }[] }).errors.map((e) => e.path).sort()).toEqual([
      'channels/0/url',
      'query/maxPrice',
    ]);
    const tooMany = await post(
      '/api/subscriptions',
      {
        query: {},
        channels: Array.from({ length: 6 }, (_, n) => ({ type: 'email', email: `inbox${n}@example.com` })),
      },
      buyerKey,
    );
    expect(tooMany.body).toMatchObject({ errors: [{ path: 'channels' }] });
  });

  it('refuses one inbox in several channels, whatever its case or +tag', async () => {
    const flood = await post('/api/subscriptions', {
      query: { search: 'quillon' },
      channels: [
        'victim@example.com',
        'Victim@Example.com',
        'victim+1@example.com',
        'victim+2@example.com',
      ].map((email) => ({ type: 'email', email })),
    });
    expect(flood.status).toBe(400);
    expect((flood.body as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual([
      'channels/1',
      'channels/2',
      'channels/3',
    ]);
  });

  it('limits new saved searches naming one inbox, over REST and the tool alike, whatever the +tag', async () => {
    const subscribeOver = (transport: 'rest' | 'tool', email: string) => {
      const input = { query: { search: 'flood' }, channels: [{ type: 'email', email }] };
      return transport === 'rest'
        ? post('/api/subscriptions', input)
        : post('/api/mcp/invoke', { tool: 'subscribe_to_query', parameters: input });
    };
    expect((await subscribeOver('rest', 'flooded+1@example.com')).status).toBe(201);
    expect((await subscribeOver('tool', 'flooded+2@example.com')).status).toBe(200);
    for (const transport of ['rest', 'tool'] as const) {
      const refused = await subscribeOver(transport, 'Flooded+3@example.com');
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ status: 429, detail: expect.stringMatching(/retry in \d+ s/) });
    }
  });

  it('lets an anonymous subscriber end its subscription with the token only', async () => {
    const created = await post('/api/subscriptions', {
      query: { search: 'quillon' },
      channels: [{ type: 'email', email: 'anonymous@example.com' }],
    });
    expect(created.status).toBe(201);
    const { id, unsubscribe_token: token } = created.body as { id: string; unsubscribe_token: string };
    const wrong = await marketplace.client.request(`/api/subscriptions/${id}?token=forged`, {
      method: 'DELETE',
    });
    expect(wrong.status).toBe(404);
    const byOther = await marketplace.client.request(`/api/subscriptions/${id}`, {
      method: 'DELETE',
      headers: { 'x-mcp-api-key': otherBuyerKey },
    });
    expect(byOther.status).toBe(404);
    const link = `/api/subscriptions/${id}/unsubscribe?token=${encodeURIComponent(token)}`;
    // A mail scanner following the link (twice) sees a page and changes nothing.
    for (let visit = 0; visit < 2; visit++) {
      const page = await get(link);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.body).toContain(`<form method="post" action="${link}">`);
    }
    const confirm = () => marketplace.client.request(link, { method: 'POST' });
    const confirmed = await confirm();
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ id, unsubscribed: true });
    expect((await confirm()).status).toBe(404);
  });

  it('rotates a webhook secret for its owner or its holder only, and signs with both for the overlap', async () => {
    const subscribed = await post(
      '/api/subscriptions',
      { query: { search: 'rotorwing' }, channels: [{ type: 'webhook', url: receiver.url }] },
      buyerKey,
    );
    expect(subscribed.status).toBe(201);
    const { id, webhook_secret: first } = subscribed.body as { id: string; webhook_secret: string };
    const rotate = (body: unknown, apiKey?: string) =>
      post(`/api/subscriptions/${id}/rotate-secret`, body, apiKey);
    expect((await rotate({}, otherBuyerKey)).status).toBe(404);
    expect((await rotate({})).status).toBe(401);
    expect((await rotate({ current_secret: 'whsec_forged' })).status).toBe(404);
    const smuggled = await rotate({ secret_generation: 7 }, buyerKey);
    expect(smuggled.status).toBe(400);
    expect(smuggled.body).toMatchObject({ errors: [expect.objectContaining({ path: 'secret_generation' })] });
    // The owner needs no body at all.
    const rotated = await marketplace.client.request(`/api/subscriptions/${id}/rotate-secret`, {
      method: 'POST',
      headers: { 'x-mcp-api-key': buyerKey },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    const second = rotated.body as {
      webhook_secret: string;
      secret_generation: number;
      previous_secret_valid_until: string;
    };
    expect(second).toMatchObject({
      id,
      secret_generation: 1,
      webhook_secret: expect.stringMatching(/^whsec_/),
    });
    expect(Date.parse(second.previous_secret_valid_until) - Date.now()).toBeGreaterThan(23 * 3_600_000);

    const webhook = await publishOverstockFor(id, 'Rotorwing camera drones', 90, 40);
    const signature = String(webhook.headers['x-marketplace-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(signatureValid(signature, webhook.body, second.webhook_secret)).toBe(true);
    expect(signatureValid(signature, webhook.body, first)).toBe(true);
    expect(signatureValid(signature, webhook.body, SIGNING_SECRET)).toBe(false);

    // The tool, for an anonymous subscription: the secret it holds is its proof.
    const anonymous = await post('/api/subscriptions', {
      query: { search: 'rotorwing' },
      channels: [{ type: 'webhook', url: receiver.url }],
    });
    const held = anonymous.body as { id: string; webhook_secret: string };
    const invoke = (parameters: unknown) =>
      post('/api/mcp/invoke', { tool: 'rotate_webhook_secret', parameters });
    const byTool = await invoke({ subscription_id: held.id, current_secret: held.webhook_secret });
    expect(byTool.status).toBe(200);
    expect(byTool.body).toMatchObject({ id: held.id, secret_generation: 1 });
    expect((await invoke({ subscription_id: held.id, current_secret: first })).status).toBe(404);
  }, 60_000);

  it('signs /.well-known/ucp and each webhook so that the key and alg the profile lists verify both', async () => {
    // The profile, as a UCP platform first fetches it: its keys, and its own answer signed by one of them.
    const response = await fetch(new URL('/.well-known/ucp', marketplace.client.baseUrl));
    const profileBody = await response.text();
    const { signing_keys: keys } = JSON.parse(profileBody) as { signing_keys: SigningJwk[] };
    expect(keys.map(({ alg }) => alg)).toEqual(['ES256']);
    const profileHeaders = Object.fromEntries(response.headers);
    expect(profileHeaders['content-digest']).toBe(contentDigest(profileBody));
    const profileKey = keys.find(({ kid }) => profileHeaders['signature-input']?.includes(`keyid="${kid}"`));
    expect(profileKey).toBeDefined();
    expect(
      verifiesWithListedKey(
        profileHeaders,
        { '@status': String(response.status) },
        ['@status', 'content-digest', 'content-type'],
        profileKey!,
      ),
    ).toBe(true);

    // A real delivery, verified with the key its keyid names and the alg the profile lists for that key.
    const subscribed = await post(
      '/api/subscriptions',
      { query: { search: 'keystonehook' }, channels: [{ type: 'webhook', url: receiver.url }] },
      buyerKey,
    );
    expect(subscribed.status).toBe(201);
    const { id } = subscribed.body as { id: string };
    const webhook = await publishOverstockFor(id, 'Keystonehook pallet of routers', 60, 50);
    expect(webhook.headers['ucp-agent']).toMatch(/^profile="https?:\/\/[^"]+\/\.well-known\/ucp"$/);
    expect(webhook.headers['content-digest']).toBe(contentDigest(webhook.body));
    const webhookKey = keys.find(({ kid }) =>
      String(webhook.headers['signature-input']).includes(`keyid="${kid}"`),
    );
    expect(webhookKey).toEqual(profileKey);
    const derived = {
      '@method': webhook.method,
      '@authority': String(webhook.headers.host),
      '@path': webhook.path,
    };
    const required = ['@method', '@authority', '@path', 'ucp-agent', 'content-digest', 'content-type'];
    expect(verifiesWithListedKey(webhook.headers, derived, required, webhookKey!)).toBe(true);
    // Under any other alg the same key and bytes do not verify: the alg listed is the one used.
    expect(
      verifiesWithListedKey(webhook.headers, derived, required, { ...webhookKey!, alg: 'ES384' as 'ES256' }),
    ).toBe(false);
  }, 60_000);

  it('lists and deletes the owner’s subscriptions', async () => {
    const listed = await get('/api/subscriptions', buyerKey);
    const ids = (listed.body as { subscriptions: { id: string }[] }).subscriptions.map((s) => s.id);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(
      ((await get('/api/subscriptions', otherBuyerKey)).body as { subscriptions: unknown[] }).subscriptions,
    ).toEqual([]);
    for (const id of ids) {
      const deleted = await marketplace.client.request(`/api/subscriptions/${id}`, {
        method: 'DELETE',
        headers: { 'x-mcp-api-key': buyerKey },
      });
      expect(deleted.status).toBe(204);
    }
    expect(
      ((await get('/api/subscriptions', buyerKey)).body as { subscriptions: unknown[] }).subscriptions,
    ).toEqual([]);
  });
});
