import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { issueAgentToken } from '../src/contexts/identity/domain/agent-token.js';
import { ADMIN_TOKEN, CapturedLog, TestGateway, backendsAt } from './support/gateway-harness.js';
import { InMemoryBackends } from './support/in-memory-backends.js';

const AGENT_TOKEN_SECRET = 'test-agent-token-secret-0123456789abcdef';
/** The harness's ManualClock. */
const GATEWAY_NOW = Date.UTC(2026, 0, 1);

describe.each(testEngines())('agent tokens through the gateway on $name', ({ create }) => {
  let db: Database;
  let backends: InMemoryBackends;
  let gateway: TestGateway;
  let seller: { accountId: number; apiKey: string };
  let buyer: { accountId: number; apiKey: string };
  const log = new CapturedLog();

  beforeAll(async () => {
    db = await create();
    backends = await InMemoryBackends.start(log.logger);
    gateway = await TestGateway.start(
      db,
      {
        services: backendsAt(backends.address),
        adminToken: ADMIN_TOKEN,
        agentTokenSecret: AGENT_TOKEN_SECRET,
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

  /** POST /api/products only tells a buyer (403: not a seller) from an unauthenticated caller (401). */
  const publishWith = (headers: Record<string, string>) =>
    gateway.postJson('/api/products', { name: 'n', description: 'd' }, headers);

  const tokenFor = async (apiKey: string): Promise<string> => {
    const answer = await gateway.call('/api/agent-tokens', {
      method: 'POST',
      headers: { 'X-MCP-API-Key': apiKey },
    });
    expect(answer.status).toBe(201);
    return (answer.body as { token: string }).token;
  };

  it("trades a buyer's key for a signed token that authenticates as that buyer", async () => {
    const answer = await gateway.call('/api/agent-tokens', {
      method: 'POST',
      headers: { 'X-MCP-API-Key': buyer.apiKey },
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const { token, expires_at } = answer.body as { token: string; expires_at: string };
    expect(token.split('.')[2]).toBe(String(buyer.accountId));
    expect(expires_at).toBe(new Date(GATEWAY_NOW + 3_600_000).toISOString());

    expect((await publishWith({ 'X-Agent-Token': token })).status).toBe(403);
    expect(log.text).not.toContain(token);
    expect(log.text).not.toContain(token.split('.')[3]);
  });

  it('answers 401 for a token that is tampered with, expired, malformed or of no buyer', async () => {
    const valid = issueAgentToken(AGENT_TOKEN_SECRET, buyer.accountId, GATEWAY_NOW).token;
    const [sessionId, expires, , mac] = valid.split('.');
    for (const token of [
      `${sessionId}.${expires}.${seller.accountId}.${mac}`,
      issueAgentToken(AGENT_TOKEN_SECRET, buyer.accountId, GATEWAY_NOW - 2 * 3_600_000).token,
      issueAgentToken(AGENT_TOKEN_SECRET, seller.accountId, GATEWAY_NOW).token,
      issueAgentToken(AGENT_TOKEN_SECRET, 987_654, GATEWAY_NOW).token,
      // Correctly signed, but never issued through the gateway: no key stands behind it.
      valid,
      'not-a-token',
    ]) {
      const answer = await publishWith({ 'X-Agent-Token': token });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ status: 401, detail: expect.stringContaining('X-Agent-Token') });
    }
  });

  it('issues tokens only to buyers, only for an API key', async () => {
    const asSeller = await gateway.call('/api/agent-tokens', {
      method: 'POST',
      headers: { 'X-MCP-API-Key': seller.apiKey },
    });
    expect(asSeller.status).toBe(403);
    const token = await tokenFor(buyer.apiKey);
    const withToken = await gateway.call('/api/agent-tokens', {
      method: 'POST',
      headers: { 'X-Agent-Token': token },
    });
    expect(withToken.status).toBe(403);
    expect((await gateway.call('/api/agent-tokens', { method: 'POST' })).status).toBe(401);
    expect((await gateway.call('/api/agent-tokens')).status).toBe(405);
  });

  it('refuses the tokens of a key once the key is revoked, and only that key’s', async () => {
    const keyToRevoke = (await gateway.postJson(
      `/api/admin/accounts/${buyer.accountId}/api-keys`,
      {},
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    )) as { status: number; body: { api_key: string; api_key_prefix: string } };
    expect(keyToRevoke.status).toBe(201);
    const doomed = await tokenFor(keyToRevoke.body.api_key);
    const kept = await tokenFor(buyer.apiKey);
    expect((await publishWith({ 'X-Agent-Token': doomed })).status).toBe(403);
    const revoked = await gateway.call(`/api/admin/api-keys/${keyToRevoke.body.api_key_prefix}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(revoked.status).toBe(204);
    const refused = await publishWith({ 'X-Agent-Token': doomed });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ detail: expect.stringContaining('revoked') });
    expect((await publishWith({ 'X-Agent-Token': kept })).status).toBe(403);
  });

  it('refuses a request carrying both a key and a token', async () => {
    const token = await tokenFor(buyer.apiKey);
    const answer = await publishWith({ 'X-MCP-API-Key': seller.apiKey, 'X-Agent-Token': token });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ detail: expect.stringContaining('not both') });
  });
});
