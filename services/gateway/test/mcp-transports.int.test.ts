import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { createParser } from 'eventsource-parser';
import { ADMIN_TOKEN, CapturedLog, TestGateway, backendsAt } from './support/gateway-harness.js';
import { InMemoryBackends } from './support/in-memory-backends.js';

const [engine] = testEngines();

/** The transports over the gateway alone (in-memory backends); the full conformance suite is in e2e/. */
describe('MCP transports', () => {
  let db: Database;
  let backends: InMemoryBackends;
  let gateway: TestGateway;
  let sellerKey: string;
  let buyerKey: string;

  const connect = async (headers: Record<string, string> = {}): Promise<Client> => {
    const client = new Client({ name: 'gateway-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', gateway.baseUrl), { requestInit: { headers } }),
    );
    return client;
  };
  const rpc = (body: unknown, headers: Record<string, string> = {}) =>
    gateway.postJson('/api/mcp/streamable', body, headers);

  beforeAll(async () => {
    db = await engine!.create();
    backends = await InMemoryBackends.start(new CapturedLog().logger);
    gateway = await TestGateway.start(db, {
      services: backendsAt(backends.address),
      adminToken: ADMIN_TOKEN,
      publicBaseUrl: 'https://market.test',
    });
    sellerKey = (await gateway.createAccount('seller')).apiKey;
    buyerKey = (await gateway.createAccount('buyer')).apiKey;
    const published = await gateway.postJson(
      '/api/products',
      { name: 'Pallet of Quorvex headphones', description: 'Shelf pulls', promotePublicly: true },
      { 'x-mcp-api-key': sellerKey },
    );
    expect(published.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backends?.stop();
    await db?.close();
  });

  describe('/mcp sessions (resource subscriptions)', () => {
    const mcp = (
      body: unknown,
      headers: Record<string, string>,
      method = 'POST',
    ): ReturnType<TestGateway['call']> =>
      gateway.call('/mcp', {
        method,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
      });
    const initialize = (headers: Record<string, string>) =>
      mcp(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 't', version: '1' },
          },
        },
        headers,
      );

    it('opens a session for an authenticated initialize only, advertising resources.subscribe there', async () => {
      const keyed = await initialize({ 'x-mcp-api-key': buyerKey });
      expect(keyed.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(keyed.body).toMatchObject({ result: { capabilities: { resources: { subscribe: true } } } });
      const anonymous = await initialize({});
      expect(anonymous.headers.get('mcp-session-id')).toBeNull();
      expect(anonymous.body).toMatchObject({ result: { capabilities: { resources: { subscribe: false } } } });
      const client = await connect({ 'x-mcp-api-key': buyerKey });
      expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: false });
      await client.close();
    });

    it('answers bad subscribe params with -32602 naming uri, and a stateless subscribe with -32601', async () => {
      const id = (await initialize({ 'x-mcp-api-key': buyerKey })).headers.get('mcp-session-id')!;
      const inSession = {
        'x-mcp-api-key': buyerKey,
        'mcp-session-id': id,
        'mcp-protocol-version': '2025-11-25',
      };
      const noUri = await mcp(
        { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: {} },
        inSession,
      );
      expect(noUri.body).toMatchObject({ error: { code: -32602, message: expect.stringContaining('uri') } });
      const stats = await mcp(
        { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri: 'marketplace://stats' } },
        inSession,
      );
      expect(stats.body).toMatchObject({ error: { code: -32602, message: expect.stringContaining('uri') } });
      const unknown = await mcp(
        { jsonrpc: '2.0', id: 4, method: 'resources/subscribe', params: { uri: 'marketplace://nothing' } },
        inSession,
      );
      expect(unknown.body).toMatchObject({ error: { code: -32002 } });
      const stateless = await mcp(
        { jsonrpc: '2.0', id: 5, method: 'resources/subscribe', params: { uri: 'marketplace://stats' } },
        { 'x-mcp-api-key': buyerKey },
      );
      expect(stateless.body).toMatchObject({
        error: { code: -32601, message: expect.stringContaining('Mcp-Session-Id') },
      });
    });

    it("is 404 for another credential's or an ended session, which DELETE ends", async () => {
      const id = (await initialize({ 'x-mcp-api-key': buyerKey })).headers.get('mcp-session-id')!;
      const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
      const own = { 'x-mcp-api-key': buyerKey, 'mcp-session-id': id };
      expect((await mcp(ping, own)).status).toBe(200);
      const stolen = await mcp(ping, { 'x-mcp-api-key': sellerKey, 'mcp-session-id': id });
      expect(stolen.status).toBe(404);
      expect(stolen.body).toMatchObject({ error: { code: -32001 } });
      expect(
        (await mcp(undefined, { 'x-mcp-api-key': sellerKey, 'mcp-session-id': id }, 'DELETE')).status,
      ).toBe(404);
      expect((await mcp(undefined, own, 'DELETE')).status).toBe(200);
      expect((await mcp(ping, own)).status).toBe(404);
    });
  });

  describe('/mcp through the SDK client', () => {
    it('initializes at 2025-11-25 without a session and lists tools with schemas and annotations', async () => {
      const client = await connect();
      expect(client.getServerVersion()).toMatchObject({ name: 'liquidation-marketplace', version: '1.0.0' });
      expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
      const { tools } = await client.listTools();
      const search = tools.find((tool) => tool.name === 'search_inventory');
      expect(search).toMatchObject({
        inputSchema: { type: 'object', properties: { limit: { type: 'integer', maximum: 100 } } },
        outputSchema: { type: 'object' },
        annotations: {
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
        _meta: { 'marketplace/auth': 'none' },
      });
      await client.close();
    });

    it('calls a tool: structured content and the same JSON as text', async () => {
      const client = await connect();
      const result = await client.callTool({ name: 'search_inventory', arguments: { query: 'quorvex' } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ pagination: { total: 1 } });
      const [text] = result.content as { type: string; text: string }[];
      expect(JSON.parse(text!.text)).toEqual(result.structuredContent);
      await client.close();
    });

    it('answers invalid arguments and a missing or wrong credential as isError results that say what to do', async () => {
      const anonymous = await connect();
      const invalid = await anonymous.callTool({ name: 'search_inventory', arguments: { limit: 101 } });
      expect(invalid.isError).toBe(true);
      expect(JSON.stringify(invalid.content)).toMatch(/limit: must be at most 100/);
      const pricing = { category: 'electronics', condition: 'overstock', original_retail: 10_000 };
      const noKey = await anonymous.callTool({ name: 'get_pricing_recommendation', arguments: pricing });
      expect(noKey.isError).toBe(true);
      expect(JSON.stringify(noKey.content)).toMatch(/X-MCP-API-Key/);
      await anonymous.close();

      const buyer = await connect({ 'x-mcp-api-key': buyerKey });
      const wrongRole = await buyer.callTool({ name: 'get_pricing_recommendation', arguments: pricing });
      expect(wrongRole.isError).toBe(true);
      expect(JSON.stringify(wrongRole.content)).toMatch(/seller tool/);
      await buyer.close();

      const seller = await connect({ 'x-mcp-api-key': sellerKey });
      const allowed = await seller.callTool({ name: 'get_pricing_recommendation', arguments: pricing });
      expect(allowed.structuredContent).toMatchObject({ recommended_unit_price: 5_000 });
      await seller.close();
    });

    it('refuses an unknown tool as a protocol error (-32602)', async () => {
      const client = await connect();
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
        code: -32602,
      });
      await client.close();
    });

    it('lists and reads resources; an unknown URI is -32002', async () => {
      const client = await connect();
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.uri)).toContain('marketplace://categories');
      const read = await client.readResource({ uri: 'marketplace://categories' });
      const [contents] = read.contents as { text: string; mimeType: string }[];
      expect(contents!.mimeType).toBe('application/json');
      expect(JSON.parse(contents!.text)).toMatchObject({
        categories: [{ id: 'electronics', product_count: 1 }],
      });
      await expect(client.readResource({ uri: 'marketplace://nothing' })).rejects.toMatchObject({
        code: -32002,
      });
      await client.close();
    });

    it('rejects an invalid API key before any MCP work (401)', async () => {
      await expect(connect({ 'x-mcp-api-key': 'mk_invalid' })).rejects.toThrow(/401/);
    });
  });

  describe('/mcp over raw HTTP', () => {
    const post = (headers: Record<string, string>) =>
      gateway.call('/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });

    it('answers GET and DELETE with 405 (stateless: no stream, no session)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const answer = await gateway.call('/mcp', { method });
        expect(answer.status).toBe(405);
        expect(answer.headers.get('allow')).toBe('POST, OPTIONS');
        expect(answer.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
      }
      // OPTIONS lists what the path serves: GET and DELETE too, with a session.
      const options = await gateway.call('/mcp', { method: 'OPTIONS' });
      expect(options.status).toBe(204);
      expect(options.headers.get('allow')).toBe('GET, DELETE, POST, OPTIONS');
    });

    it('answers JSON, not SSE, and mints no session id', async () => {
      const answer = await post({});
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect(answer.headers.get('mcp-session-id')).toBeNull();
    });

    it('checks Origin: the public origin and loopback pass, others are 403', async () => {
      expect((await post({ origin: 'https://market.test' })).status).toBe(200);
      expect((await post({ origin: 'http://localhost:5173' })).status).toBe(200);
      const refused = await post({ origin: 'https://evil.test' });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: { code: -32000 } });
    });

    it('refuses a JSON-RPC batch as /api/mcp/streamable does, running none of its entries', async () => {
      // The abuse: one POST (one count of the rate limiter) carrying many tool calls.
      const batch = Array.from({ length: 5 }, (_, n) => ({
        jsonrpc: '2.0',
        id: n + 1,
        method: 'tools/call',
        params: {
          name: 'create_listing',
          arguments: {
            name: `Batched pallet ${n}`,
            category: 'electronics',
            condition: 'overstock',
            quantity: 10,
            price_per_unit: 500,
          },
        },
      }));
      const headers = { 'content-type': 'application/json', 'x-mcp-api-key': sellerKey };
      const onMcp = await gateway.call('/mcp', {
        method: 'POST',
        headers: { ...headers, accept: 'application/json, text/event-stream' },
        body: JSON.stringify(batch),
      });
      const onStreamable = await rpc(batch, { 'x-mcp-api-key': sellerKey });
      expect(onMcp.status).toBe(400);
      expect(onMcp.body).toEqual(onStreamable.body);
      expect(onStreamable.status).toBe(400);
      expect(onMcp.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      const search = await rpc({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'search_inventory', arguments: { query: 'batched' } },
      });
      expect(search.body).toMatchObject({ result: { structuredContent: { pagination: { total: 0 } } } });
    });

    /** fetch may not set Host: a raw request does. */
    const postWithHost = (headers: Record<string, string>): Promise<number> =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
        const req = request(
          new URL('/mcp', gateway.baseUrl),
          {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              ...headers,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });

    it("answers methods and completion arguments named after Object.prototype's members as unknown, not 500", async () => {
      // The security fuzzer's find: `constructor` looked up a params schema in a plain object and found a function.
      // Each transport answers an unknown method as it documents: the SDK's 200, /api/mcp/streamable's 400.
      for (const [path, accept, status] of [
        ['/mcp', 'application/json, text/event-stream', 200],
        ['/api/mcp/streamable', 'application/json', 400],
      ] as const) {
        for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
          const answer = await gateway.call(path, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept },
            body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: {} }),
          });
          expect({ path, method, status: answer.status }).toEqual({ path, method, status });
          expect(answer.body).toMatchObject({ id: 7, error: { code: -32601 } });
        }
      }
      const completion = await rpc({
        jsonrpc: '2.0',
        id: 8,
        method: 'completion/complete',
        params: {
          ref: { type: 'ref/resource', uri: 'marketplace://subscriptions/{id}' },
          argument: { name: 'constructor', value: '' },
        },
      });
      expect(completion.status).toBe(200);
      expect(completion.body).toMatchObject({ id: 8, result: { completion: { values: [] } } });
    });

    it('checks Host: the public host and loopback names pass, others are 403, X-Forwarded-Host without a proxy too', async () => {
      expect(await postWithHost({ host: 'market.test' })).toBe(200);
      expect(await postWithHost({ host: 'localhost:1234' })).toBe(200);
      expect(await postWithHost({ host: 'evil.test' })).toBe(403);
      expect(await postWithHost({ host: 'market.test:8443' })).toBe(403);
      // No proxy is declared (TRUST_PROXY_HOPS 0), so a client's X-Forwarded-Host speaks for nobody
      // (origin-guard.unit covers a declared proxy).
      expect(await postWithHost({ host: 'evil.test', 'x-forwarded-host': 'localhost' })).toBe(403);
      expect(await postWithHost({ host: 'evil.test', 'x-forwarded-host': 'market.test' })).toBe(403);
    });
  });

  describe('/api/mcp/streamable', () => {
    it('answers initialize, tools/list and tools/call with one JSON-RPC response each', async () => {
      const init = await rpc({
        jsonrpc: '2.0',
        id: 'a',
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      expect(init.status).toBe(200);
      expect(init.body).toMatchObject({
        jsonrpc: '2.0',
        id: 'a',
        result: { protocolVersion: '2025-06-18', serverInfo: { name: 'liquidation-marketplace' } },
      });
      const list = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      expect((list.body as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThanOrEqual(3);
      const call = await rpc({
        jsonrpc: '2.0',
        id: null,
        method: 'tools/call',
        params: { name: 'get_product_details', arguments: { product_id: 'product_1' } },
      });
      expect(call.body).toMatchObject({ id: null, result: { structuredContent: { id: 'product_1' } } });
    });

    it('answers an unsupported protocol version with its own latest', async () => {
      const init = await rpc({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '1999-01-01' },
      });
      expect(init.body).toMatchObject({ result: { protocolVersion: '2025-11-25' } });
    });

    it.each([
      ['a wrong version', { jsonrpc: '1.0', id: 1, method: 'tools/list' }, -32600],
      ['no method', { jsonrpc: '2.0', id: 1 }, -32600],
      ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'tools/list' }, -32600],
      ['params that are not an object', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: [1] }, -32600],
      ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }], -32600],
      ['a bare string', 'tools/list', -32600],
      ['an unknown method', { jsonrpc: '2.0', id: 7, method: 'sampling/createMessage' }, -32601],
    ])('answers %s with HTTP 400 and %d', async (_case, body, code) => {
      const answer = await rpc(body);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ jsonrpc: '2.0', error: { code } });
    });

    it('answers malformed JSON with -32700', async () => {
      const answer = await gateway.call('/api/mcp/streamable', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc": "2.0",',
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    });

    it('answers a notification with 202 and no body', async () => {
      const answer = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(answer.status).toBe(202);
      expect(answer.body).toBe('');
    });

    it('reports bad params and an unknown tool as -32602 in a 200', async () => {
      const badParams = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } });
      expect(badParams.status).toBe(200);
      expect(badParams.body).toMatchObject({ id: 1, error: { code: -32602 } });
      const unknown = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'nope' } });
      expect(unknown.body).toMatchObject({ id: 2, error: { code: -32602 } });
    });

    it('answers an invalid API key as a JSON-RPC error with HTTP 401', async () => {
      const answer = await rpc(
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { 'x-mcp-api-key': 'mk_nope' },
      );
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ error: { code: -32000, data: { status: 401 } } });
    });
  });

  describe('/api/mcp/invoke and /api/mcp/stream', () => {
    it('invokes a tool and answers its result', async () => {
      const answer = await gateway.postJson('/api/mcp/invoke', {
        tool: 'search_inventory',
        parameters: { query: 'quorvex' },
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ pagination: { total: 1 } });
    });

    it('answers an unknown tool and invalid parameters with 400 problems naming the field', async () => {
      const unknown = await gateway.postJson('/api/mcp/invoke', { tool: 'nope', parameters: {} });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ errors: [{ path: 'tool' }] });
      const invalid = await gateway.postJson('/api/mcp/invoke', {
        tool: 'search_inventory',
        parameters: { limit: 0 },
      });
      expect(invalid.status).toBe(400);
      expect(invalid.body).toMatchObject({ errors: [{ path: 'parameters/limit' }] });
      const noTool = await gateway.postJson('/api/mcp/invoke', { parameters: {} });
      expect(noTool.body).toMatchObject({ status: 400, errors: [{ path: 'tool' }] });
    });

    it('refuses a foreign Origin with a 403 problem document', async () => {
      const answer = await gateway.postJson(
        '/api/mcp/invoke',
        { tool: 'search_inventory', parameters: {} },
        { origin: 'https://evil.test' },
      );
      expect(answer.status).toBe(403);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    it('answers a seller tool without a key with 401', async () => {
      const answer = await gateway.postJson('/api/mcp/invoke', {
        tool: 'get_pricing_recommendation',
        parameters: { category: 'electronics', condition: 'overstock', original_retail: 100 },
      });
      expect(answer.status).toBe(401);
    });

    it('streams one message event with the result, then done', async () => {
      const answer = await gateway.postJson('/api/mcp/stream', {
        tool: 'get_product_details',
        parameters: { product_id: 'product_1' },
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events: { event: string | undefined; data: string }[] = [];
      const parser = createParser({ onEvent: ({ event, data }) => events.push({ event, data }) });
      parser.feed(answer.body as string);
      expect(events.map((event) => event.event)).toEqual(['message', 'done']);
      expect(JSON.parse(events[0]!.data)).toMatchObject({ id: 'product_1' });
    });

    it('answers a failing stream call with the problem, not an event stream', async () => {
      const answer = await gateway.postJson('/api/mcp/stream', {
        tool: 'get_product_details',
        parameters: { product_id: 'product_404' },
      });
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });
  });
});
