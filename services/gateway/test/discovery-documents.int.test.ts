import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { TestGateway, backendsAt } from './support/gateway-harness.js';
import { contentDigest, verifiesResponseSignature } from '@marketplace/platform';
import type { SigningJwk } from '@marketplace/platform';

const [engine] = testEngines();
const PUBLIC_BASE_URL = 'https://market.example.com';

/** `public, max-age=N` with N ≥ 60, as UCP requires of its profile and we give every discovery document. */
const expectPublicCaching = (cacheControl: string | null): void => {
  expect(cacheControl).toMatch(/^public, max-age=[0-9]+$/);
  expect(Number(cacheControl!.split('=')[1])).toBeGreaterThanOrEqual(60);
};

/** The documents need no backend: the gateway builds them from its own registry and schemas. */
describe('discovery documents', () => {
  let db: Database;
  let gateway: TestGateway;

  beforeAll(async () => {
    db = await engine!.create();
    gateway = await TestGateway.start(db, {
      services: backendsAt('127.0.0.1:1'),
      publicBaseUrl: PUBLIC_BASE_URL,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await db?.close();
  });

  it('serves /openapi.json as a valid OpenAPI 3.1.0 document, version 1.0.0', async () => {
    const answer = await gateway.call('/openapi.json');
    expect(answer.status).toBe(200);
    expectPublicCaching(answer.headers.get('cache-control'));
    const document = answer.body as { openapi: string; info: { version: string }; paths: object };
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.0.0');
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/mcp',
        '/api/mcp/streamable',
        '/api/mcp/invoke',
        '/api/mcp/stream',
        '/openapi.json',
      ]),
    );
  });

  it('documents each MCP route with the body schema its handler parses', async () => {
    const { body } = await gateway.call('/openapi.json');
    const invoke = (body as { paths: Record<string, Record<string, Record<string, unknown>>> }).paths[
      '/api/mcp/invoke'
    ]!['post']!;
    expect(invoke).toMatchObject({
      operationId: 'invokeMcpTool',
      requestBody: {
        content: {
          'application/json': { schema: { type: 'object', required: ['tool'], properties: { tool: {} } } },
        },
      },
      responses: {
        400: {
          content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
        },
      },
    });
  });

  it('serves the tool manifest, generated from the registry', async () => {
    const answer = await gateway.call('/api/mcp/schema.json');
    expect(answer.status).toBe(200);
    expectPublicCaching(answer.headers.get('cache-control'));
    const manifest = answer.body as {
      schema_version: string;
      tools: {
        name: string;
        auth: string;
        input_schema: { type: string };
        output_schema: { type: string };
      }[];
      resources: { name: string }[];
      transports: Record<string, { url: string }>;
    };
    expect(manifest.schema_version).toBe('1.0');
    expect(manifest.tools.map((tool) => tool.name)).toContain('search_inventory');
    for (const tool of manifest.tools) {
      expect(tool.input_schema.type).toBe('object');
      expect(tool.output_schema.type).toBe('object');
      expect(['none', 'buyer', 'seller']).toContain(tool.auth);
    }
    expect(manifest.resources.map((resource) => resource.name)).toContain('categories');
    expect(manifest.transports['mcp']!.url).toBe(`${PUBLIC_BASE_URL}/mcp`);
  });

  it('serves a UCP business profile: our services under our own namespace, and the standard checkout and catalog over REST and MCP', async () => {
    const answer = await gateway.call('/.well-known/ucp');
    expect(answer.status).toBe(200);
    expectPublicCaching(answer.headers.get('cache-control'));
    const profile = answer.body as {
      ucp: {
        version: string;
        services: Record<string, { transport: string; endpoint: string }[]>;
        payment_handlers: object;
        capabilities: Record<string, unknown>;
      };
    };
    expect(profile.ucp.version).toMatch(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/);
    const services = profile.ucp.services['com.example.market.marketplace']!;
    expect(services.map(({ transport, endpoint }) => [transport, endpoint])).toEqual([
      ['rest', `${PUBLIC_BASE_URL}/api/ucp`],
      ['mcp', `${PUBLIC_BASE_URL}/mcp`],
    ]);
    // The standard capabilities, over REST under /api/ucp/shopping (paths /checkout-sessions, /catalog/…):
    // not /api/ucp, whose /catalog/search is our own semantic search; over MCP, as tools on /mcp.
    expect(profile.ucp.services['dev.ucp.shopping']).toEqual([
      expect.objectContaining({ transport: 'rest', endpoint: `${PUBLIC_BASE_URL}/api/ucp/shopping` }),
      expect.objectContaining({
        transport: 'mcp',
        endpoint: `${PUBLIC_BASE_URL}/mcp`,
        schema: 'https://ucp.dev/2026-04-08/services/shopping/mcp.openrpc.json',
      }),
    ]);
    expect(profile.ucp.payment_handlers).toEqual({});
    const standard = Object.keys(profile.ucp.capabilities).filter((name) => name.startsWith('dev.ucp.'));
    expect(standard.sort()).toEqual([
      'dev.ucp.shopping.catalog.lookup',
      'dev.ucp.shopping.catalog.search',
      'dev.ucp.shopping.checkout',
    ]);
    for (const name of Object.keys(profile.ucp.capabilities)) {
      expect(name).toMatch(/^(com\.example\.market\.|dev\.ucp\.shopping\.)/);
    }
    for (const name of standard) {
      expect(profile.ucp.capabilities[name]).toEqual([
        expect.objectContaining({ version: profile.ucp.version }),
      ]);
    }
  });

  it('publishes the signing key in /.well-known/ucp and signs the profile with it (RFC 9421)', async () => {
    const response = await fetch(new URL('/.well-known/ucp', gateway.baseUrl));
    const body = await response.text();
    const { signing_keys: keys } = JSON.parse(body) as { signing_keys: SigningJwk[] };
    expect(keys).toHaveLength(1);
    const [key] = keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256' });
    expect(key).not.toHaveProperty('d');

    const digest = response.headers.get('content-digest')!;
    expect(digest).toBe(contentDigest(body));
    // UCP signatures: the answer's body bound by digest and type, no `alg` (the verifier takes it from the JWK).
    expect(response.headers.get('signature-input')).toMatch(
      new RegExp(`^sig1=\\("@status" "content-digest" "content-type"\\);created=[0-9]+;keyid="${key!.kid}"$`),
    );
    const received = { status: response.status, headers: Object.fromEntries(response.headers), body };
    expect(verifiesResponseSignature(received, key!)).toBe(true);
    expect(verifiesResponseSignature({ ...received, body: body.replace('"ucp"', '"ucq"') }, key!)).toBe(
      false,
    );
    expect(verifiesResponseSignature({ ...received, status: 404 }, key!)).toBe(false);
  });

  it('serves the ACP discovery document at /.well-known/acp and /.well-known/acp.json', async () => {
    const plain = await gateway.call('/.well-known/acp');
    const json = await gateway.call('/.well-known/acp.json');
    expect(plain.status).toBe(200);
    expectPublicCaching(plain.headers.get('cache-control'));
    expect(json.body).toEqual(plain.body);
    expect(plain.body).toMatchObject({
      protocol: { name: 'acp', version: '2026-04-17', supported_versions: ['2026-04-17'] },
      api_base_url: `${PUBLIC_BASE_URL}/api/acp`,
      transports: ['rest'],
      capabilities: { services: ['checkout'] },
    });
    // ACP's DiscoveryResponse admits no other member (docs/protocols.md §4): the feed is listed in /llms.txt.
    expect(Object.keys(plain.body as object).sort()).toEqual([
      'api_base_url',
      'capabilities',
      'protocol',
      'transports',
    ]);
  });

  it('serves /llms.txt: an H1, a summary, and links to every agent surface and tool', async () => {
    const answer = await gateway.call('/llms.txt');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/markdown/);
    expectPublicCaching(answer.headers.get('cache-control'));
    const text = answer.body as string;
    expect(text).toMatch(/^# Liquidation Marketplace\n\n> /);
    for (const path of [
      '/mcp',
      '/api/mcp/schema.json',
      '/openapi.json',
      '/asyncapi.json',
      '/.well-known/ucp',
    ]) {
      expect(text).toContain(`](${PUBLIC_BASE_URL}${path})`);
    }
    expect(text).toContain('- search_inventory (anonymous)');
  });

  it('lists only URLs that answer: every URL of the UCP, ACP and llms.txt documents is served', async () => {
    const listed = new Set<string>();
    for (const path of ['/.well-known/ucp', '/.well-known/acp.json', '/llms.txt']) {
      const answer = await gateway.call(path);
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      for (const [url] of text.matchAll(/https:\/\/market\.example\.com[^\s"'()<>\]]*/g)) listed.add(url);
    }
    const concrete = [...listed].filter((url) => !url.includes('{'));
    expect(concrete.length).toBeGreaterThan(5);
    const answers = await Promise.all(
      concrete.map(async (url) => {
        const { pathname, search } = new URL(url);
        return { url, status: (await gateway.call(`${pathname}${search}`)).status };
      }),
    );
    expect(answers.filter(({ status }) => status === 404)).toEqual([]);
  });

  it("serves every standard capability the UCP profile lists at its REST binding's paths under the service endpoint", async () => {
    const profile = (await gateway.call('/.well-known/ucp')).body as {
      ucp: {
        services: Record<string, { transport: string; endpoint: string }[]>;
        capabilities: Record<string, unknown>;
      };
    };
    const { pathname: base } = new URL(
      profile.ucp.services['dev.ucp.shopping']!.find(({ transport }) => transport === 'rest')!.endpoint,
    );
    // docs/protocols.md §2.3-2.4, "REST": the operations each capability's binding defines.
    const bindings: Record<string, readonly string[]> = {
      'dev.ucp.shopping.checkout': ['/checkout-sessions', '/checkout-sessions/order_1/complete'],
      'dev.ucp.shopping.catalog.search': ['/catalog/search'],
      'dev.ucp.shopping.catalog.lookup': ['/catalog/lookup', '/catalog/product'],
    };
    const listed = Object.keys(profile.ucp.capabilities).filter((name) => name.startsWith('dev.ucp.'));
    expect(listed.sort()).toEqual(Object.keys(bindings).sort());
    for (const name of listed) {
      for (const path of bindings[name]!) {
        // A body the operation refuses: a 400 naming the field proves the route is there (no backend runs).
        const answer = await gateway.call(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ line_items: 'none', ids: 'none', id: 7, query: 7 }),
        });
        expect({ name, path, status: answer.status }).toEqual({ name, path, status: 400 });
      }
    }
  });

  it("lists every standard capability's MCP tools on the UCP profile's MCP endpoint", async () => {
    const profile = (await gateway.call('/.well-known/ucp')).body as {
      ucp: {
        services: Record<string, { transport: string; endpoint: string }[]>;
        capabilities: Record<string, unknown>;
      };
    };
    const { pathname } = new URL(
      profile.ucp.services['dev.ucp.shopping']!.find(({ transport }) => transport === 'mcp')!.endpoint,
    );
    const answer = await gateway.call(pathname, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(answer.status).toBe(200);
    const names = (answer.body as { result: { tools: { name: string }[] } }).result.tools.map(
      (tool) => tool.name,
    );
    // docs/protocols.md §2.3-2.4, "MCP tools": the tools each capability's binding defines.
    const bindings: Record<string, readonly string[]> = {
      'dev.ucp.shopping.checkout': [
        'create_checkout',
        'get_checkout',
        'update_checkout',
        'complete_checkout',
        'cancel_checkout',
      ],
      'dev.ucp.shopping.catalog.search': ['search_catalog'],
      'dev.ucp.shopping.catalog.lookup': ['lookup_catalog', 'get_product'],
    };
    const listed = Object.keys(profile.ucp.capabilities).filter((name) => name.startsWith('dev.ucp.'));
    expect(listed.sort()).toEqual(Object.keys(bindings).sort());
    for (const name of listed) {
      for (const tool of bindings[name]!)
        expect({ name, tool, listed: names.includes(tool) }).toEqual({ name, tool, listed: true });
    }
  });

  it('serves the terms of sale and the return policy the product feed links', async () => {
    for (const path of ['/agents/terms.md', '/agents/returns.md']) {
      const answer = await gateway.call(path);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/markdown/);
      expectPublicCaching(answer.headers.get('cache-control'));
    }
    const returns = (await gateway.call('/agents/returns.md')).body as string;
    expect(returns).toContain('48 hours');
    expect(returns).toContain(`${PUBLIC_BASE_URL}/agents/terms.md`);
  });

  it('answers other methods on the documents with 405', async () => {
    for (const path of [
      '/openapi.json',
      '/asyncapi.json',
      '/api/mcp/schema.json',
      '/.well-known/ucp',
      '/llms.txt',
    ]) {
      const answer = await gateway.call(path, { method: 'POST' });
      expect(answer.status).toBe(405);
    }
  });

  // Last: the parser keeps the event loop busy for seconds, which outlives the harness's keep-alive sockets.
  it('serves /asyncapi.json as a valid AsyncAPI 3.0 document with the five topics', async () => {
    const answer = await gateway.call('/asyncapi.json');
    expect(answer.status).toBe(200);
    expectPublicCaching(answer.headers.get('cache-control'));
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(answer.body));
    // Warnings (style hints) are allowed, errors are not.
    expect(
      diagnostics.filter((diagnostic) => Number(diagnostic.severity) === Number(DiagnosticSeverity.Error)),
    ).toEqual([]);
    expect(document).toBeDefined();
    expect(
      document!
        .channels()
        .all()
        .map((channel) => channel.address())
        .sort(),
    ).toEqual([
      'marketplace.account.v1',
      'marketplace.listing.v1',
      'marketplace.order.v1',
      'marketplace.quote.v1',
      'marketplace.subscription.v1',
    ]);
    const quote = (answer.body as { components: { schemas: Record<string, { properties: object }> } })
      .components.schemas['marketplace.quote.v1.QuoteEvent'];
    expect(Object.keys(quote!.properties)).toEqual(
      expect.arrayContaining(['eventId', 'streamId', 'requested']),
    );
  });
});
