import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { CATEGORIES, CONDITIONS } from '@marketplace/vocabulary';
import { ADMIN_TOKEN, CapturedLog, TestGateway, backendsAt } from './support/gateway-harness.js';
import { InMemoryBackends } from './support/in-memory-backends.js';

const [engine] = testEngines();

/** Prompts, completions and logging (docs/agents.md, "MCP") alike on /mcp (SDK) and /api/mcp/streamable. */
describe('MCP prompts, completions and logging', () => {
  let db: Database;
  let backends: InMemoryBackends;
  let gateway: TestGateway;

  const rpc = async (method: string, params?: unknown) => {
    const response = await gateway.postJson('/api/mcp/streamable', { jsonrpc: '2.0', id: 1, method, params });
    return response.body as { result?: Record<string, unknown>; error?: { code: number; message: string } };
  };
  /** The same request through the official SDK's server, answered as JSON. */
  const sdkRpc = async (method: string, params?: unknown) => {
    const response = await gateway.postJson(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method, params },
      { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    );
    return response.body as { result?: Record<string, unknown>; error?: { code: number; message: string } };
  };
  const both = async (method: string, params?: unknown) => {
    const [ours, sdk] = await Promise.all([rpc(method, params), sdkRpc(method, params)]);
    return { ours, sdk };
  };

  beforeAll(async () => {
    db = await engine!.create();
    backends = await InMemoryBackends.start(new CapturedLog().logger);
    gateway = await TestGateway.start(db, {
      services: backendsAt(backends.address),
      adminToken: ADMIN_TOKEN,
      publicBaseUrl: 'https://market.test',
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backends?.stop();
    await db?.close();
  });

  it('declares prompts, completions and logging in initialize on both transports', async () => {
    const { ours } = await both('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });
    expect(ours.result?.['capabilities']).toMatchObject({ prompts: {}, completions: {}, logging: {} });
    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gateway.baseUrl)));
    expect(client.getServerCapabilities()).toMatchObject({ prompts: {}, completions: {}, logging: {} });
    await client.close();
  });

  it('lists the three journeys with described arguments, the same on both transports', async () => {
    const { ours, sdk } = await both('prompts/list');
    expect(sdk.result).toEqual(ours.result);
    const prompts = ours.result?.['prompts'] as {
      name: string;
      arguments: { name: string; required: boolean; description: string }[];
    }[];
    expect(prompts.map((prompt) => prompt.name)).toEqual([
      'find_and_quote_lot',
      'restock_from_liquidation',
      'answer_quote_inbox',
    ]);
    for (const prompt of prompts) {
      for (const arg of prompt.arguments) expect(arg.description.length).toBeGreaterThan(10);
    }
    expect(prompts[0]!.arguments.find((arg) => arg.name === 'need')?.required).toBe(true);
    expect(prompts[0]!.arguments.find((arg) => arg.name === 'category')?.required).toBe(false);
  });

  it('gets a prompt whose text names the real tools in order', async () => {
    const { ours, sdk } = await both('prompts/get', {
      name: 'find_and_quote_lot',
      arguments: { need: 'USB-C chargers', quantity: '500', category: 'electronics' },
    });
    expect(sdk.result).toEqual(ours.result);
    const text = (ours.result?.['messages'] as { content: { text: string } }[])[0]!.content.text;
    expect(text).toContain('USB-C chargers, 500 units, category electronics');
    const order = ['search_inventory', 'get_product_details', 'request_quote', 'get_quote_status'].map(
      (tool) => text.indexOf(tool),
    );
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);

    const inbox = await rpc('prompts/get', { name: 'answer_quote_inbox' });
    const inboxText = (inbox.result?.['messages'] as { content: { text: string } }[])[0]!.content.text;
    expect(inboxText.indexOf('get_quote_requests')).toBeLessThan(inboxText.indexOf('respond_to_quote'));
  });

  it.each([
    [{ name: 'no_such_prompt' }, /unknown prompt no_such_prompt/],
    [{ name: 'restock_from_liquidation', arguments: { product: 'pans' } }, /arguments\.quantity is required/],
    [
      { name: 'find_and_quote_lot', arguments: { need: 'x', condition: 'mint' } },
      /arguments\.condition must be one of/,
    ],
    [
      { name: 'find_and_quote_lot', arguments: { need: 'x', quantity: 'many' } },
      /arguments\.quantity must be a positive/,
    ],
    [
      { name: 'find_and_quote_lot', arguments: { need: 'x', colour: 'red' } },
      /arguments\.colour is not an argument/,
    ],
    [{ name: 'find_and_quote_lot', arguments: { need: 3 } }, /every value of arguments must be a string/],
    [{ name: 'find_and_quote_lot', arguments: ['x'] }, /arguments must be an object of strings/],
    [{}, /name must be a string/],
  ])('prompts/get %j is -32602 naming the field on both transports', async (params, message) => {
    const { ours, sdk } = await both('prompts/get', params);
    expect(ours.error).toMatchObject({ code: -32602, message: expect.stringMatching(message) });
    expect(sdk.error).toMatchObject({ code: -32602, message: expect.stringMatching(message) });
  });

  it('completes categories and conditions by prefix, the same on both transports', async () => {
    const { ours, sdk } = await both('completion/complete', {
      ref: { type: 'ref/prompt', name: 'find_and_quote_lot' },
      argument: { name: 'category', value: 'to' },
    });
    expect(sdk.result).toEqual(ours.result);
    expect(ours.result).toEqual({ completion: { values: ['toys', 'tools'], total: 2, hasMore: false } });
    const all = await rpc('completion/complete', {
      ref: { type: 'ref/prompt', name: 'find_and_quote_lot' },
      argument: { name: 'condition', value: '' },
    });
    expect(all.result).toEqual({
      completion: { values: [...CONDITIONS], total: CONDITIONS.length, hasMore: false },
    });
    expect(CATEGORIES).toContain('toys');
  });

  it('offers no quote ids to a caller without a credential', async () => {
    const { ours, sdk } = await both('completion/complete', {
      ref: { type: 'ref/prompt', name: 'answer_quote_inbox' },
      argument: { name: 'quote_request_id', value: '' },
    });
    expect(ours.result).toEqual({ completion: { values: [], total: 0, hasMore: false } });
    expect(sdk.result).toEqual(ours.result);
  });

  it.each([
    [
      { ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } },
      /unknown prompt nope/,
    ],
    [
      { ref: { type: 'ref/prompt', name: 'find_and_quote_lot' }, argument: { name: 'colour', value: '' } },
      /has no argument colour/,
    ],
    [
      {
        ref: { type: 'ref/resource', uri: 'marketplace://nothing/{id}' },
        argument: { name: 'id', value: '' },
      },
      /ref\.uri: no resource template/,
    ],
    [{ ref: { type: 'ref/other' }, argument: { name: 'x', value: '' } }, /ref\.type must be/],
    [{ ref: { type: 'ref/prompt', name: 'find_and_quote_lot' } }, /argument must be an object/],
  ])('completion/complete %j is -32602 on both transports', async (params, message) => {
    const { ours, sdk } = await both('completion/complete', params);
    expect(ours.error).toMatchObject({ code: -32602, message: expect.stringMatching(message) });
    expect(sdk.error).toMatchObject({ code: -32602, message: expect.stringMatching(message) });
  });

  it('acknowledges logging/setLevel and refuses an unknown level with -32602 on both transports', async () => {
    const { ours, sdk } = await both('logging/setLevel', { level: 'warning' });
    expect(ours.result).toEqual({});
    expect(sdk.result).toEqual({});
    const bad = await both('logging/setLevel', { level: 'verbose' });
    expect(bad.ours.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/level must be one of debug/),
    });
    expect(bad.sdk.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/level must be one of debug/),
    });
  });
});
