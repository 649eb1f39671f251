import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { migrate, quoteIdent, type Database } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  testEngines,
} from '@marketplace/database/testing';
import { isAppError, ManualClock } from '@marketplace/platform';
import { IDENTITY_MIGRATIONS } from '../src/contexts/identity/adapters/identity.migrations.js';
import { IdentityRepository } from '../src/contexts/identity/adapters/identity.repository.js';
import { createIdentityService, type IdentityService } from '../src/contexts/identity/identity.service.js';

const SECRET = 'an agent token secret of at least 32 characters';
const TTL_MS = 30_000;

/** Two gateways sharing one identity schema, each with its API-key cache (docs/security.md). */
describe.each(testEngines())('the API-key cache on $name', ({ create }) => {
  const schema = freshSchemaName('identity_cache');
  const clock = new ManualClock(Date.UTC(2026, 10, 26));
  let db: Database;
  let first: IdentityService;
  let second: IdentityService;
  let reads = 0;
  /** The prefixes each gateway was told were revoked (onKeyRevoked). */
  const told: Record<'first' | 'second', string[]> = { first: [], second: [] };

  const isAccepted = (identity: IdentityService, key: string): Promise<boolean> =>
    identity.authenticate(key).then(
      () => true,
      (error: unknown) => {
        if (isAppError(error) && error.kind === 'unauthenticated') return false;
        throw error;
      },
    );
  const sellerKey = async (): Promise<{ apiKey: string; apiKeyPrefix: string }> =>
    first.createAccount({ role: 'seller', name: 'Cached Seller', email: 'cached@seller.example' });

  beforeAll(async () => {
    db = await create();
    await migrate(db, schema, IDENTITY_MIGRATIONS);
    // Counts the reads of the keys table, to tell a cached answer from a looked-up one.
    const counted: Database = {
      ...db,
      engine: db.engine,
      query: (sql, params) => {
        if (sql.includes('api_keys k')) reads++;
        return db.query(sql, params);
      },
      transaction: (work, options) => db.transaction(work, options),
      listen: (channel, onNotify) => db.listen(channel, onNotify),
      withAdvisoryLock: (key, work, options) => db.withAdvisoryLock(key, work, options),
      afterCommit: (callback) => db.afterCommit(callback),
      close: () => db.close(),
    };
    const gateway = (name: keyof typeof told) =>
      createIdentityService({
        db: counted,
        schema,
        repository: new IdentityRepository(schema),
        clock,
        agentTokenSecret: SECRET,
        keyCache: { ttlMs: TTL_MS },
        onKeyRevoked: (prefix) => told[name].push(prefix),
      });
    first = gateway('first');
    second = gateway('second');
    await first.start();
    await second.start();
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  afterAll(async () => {
    await first.stop();
    await second.stop();
    await dropSchema(db, schema);
    await db.close();
  });

  it('answers a known key from memory after the first lookup', async () => {
    const { apiKey } = await sellerKey();
    const before = reads;
    for (let n = 0; n < 5; n++) expect(await isAccepted(second, apiKey)).toBe(true);
    expect(reads - before).toBe(1);
  });

  it('still checks the presented secret against the cached key', async () => {
    const { apiKey } = await sellerKey();
    expect(await isAccepted(second, apiKey)).toBe(true);
    const forged = `${apiKey.slice(0, -1)}${apiKey.endsWith('a') ? 'b' : 'a'}`;
    expect(await isAccepted(second, forged)).toBe(false);
  });

  it('forgets a key revoked through another gateway within the notification delay', async () => {
    const { apiKey, apiKeyPrefix } = await sellerKey();
    expect(await isAccepted(second, apiKey)).toBe(true);
    // The clock stands still: the expiry cannot be what ends the cached entry here, only the notification.
    const revokedAt = performance.now();
    await first.revokeApiKey(apiKeyPrefix);
    while (await isAccepted(second, apiKey)) {
      if (performance.now() - revokedAt > 5_000) throw new Error('the revocation never reached the cache');
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const delayMs = performance.now() - revokedAt;
    if (process.env['PRINT_REVOCATION_DELAY'] === '1')
      console.info(`revocation delay ${delayMs.toFixed(1)} ms`);
    expect(delayMs).toBeLessThan(5_000);
    expect(await isAccepted(first, apiKey)).toBe(false);
    // Both are told, so each can end the MCP sessions of the key (docs/security.md).
    expect(told.first).toContain(apiKeyPrefix);
    expect(told.second).toContain(apiKeyPrefix);
  });

  it("names the key an agent token was issued for, so the key's revocation reaches the token's sessions", async () => {
    const buyer = await first.createAccount({
      role: 'buyer',
      name: 'Token Buyer',
      email: 'token@buyer.example',
    });
    const principal = await first.authenticate(buyer.apiKey);
    const { token } = await first.issueAgentToken(principal);
    expect((await second.authenticateAgentToken(token)).credential).toMatchObject({
      kind: 'agent_token',
      apiKeyPrefix: buyer.apiKeyPrefix,
    });
  });

  it('forgets a key revoked without a notification once its entry expires (the backstop)', async () => {
    const { apiKey, apiKeyPrefix } = await sellerKey();
    expect(await isAccepted(second, apiKey)).toBe(true);
    // A revocation whose notification was lost: the row changes, no gateway hears of it.
    await db.query(`UPDATE ${quoteIdent(schema)}.api_keys SET revoked_at = now() WHERE prefix = $1`, [
      apiKeyPrefix,
    ]);
    expect(await isAccepted(second, apiKey)).toBe(true);
    clock.advance(TTL_MS);
    expect(await isAccepted(second, apiKey)).toBe(false);
  });
});
