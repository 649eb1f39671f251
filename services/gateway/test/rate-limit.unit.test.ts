import { afterEach, describe, expect, it } from '@jest/globals';
import { AppError } from '@marketplace/platform';
import type { RateLimitStore } from '@marketplace/ratelimit';
import { createMemoryRateLimitStore } from '@marketplace/ratelimit';
import type { Principal } from '../src/edge/account.js';
import { rateLimitConfigSchema } from '../src/edge/http/rate-limit.config.js';
import { RateLimiter, rateLimitPoliciesOf } from '../src/edge/http/rate-limit.js';

/** 10:15 UTC: 45 minutes before the hour's sub-window ends. */
const T = Date.UTC(2026, 8, 1, 10, 15, 0);
const KEYED: Principal = {
  accountId: 21,
  role: 'buyer',
  credential: { kind: 'api_key', keyPrefix: 'lmk_abcdefgh' },
};
const TOKEN: Principal = {
  accountId: 21,
  role: 'buyer',
  credential: { kind: 'agent_token', sessionId: 's1', apiKeyPrefix: 'mk_k' },
};

describe('gateway rate limiter', () => {
  let store: RateLimitStore;
  afterEach(async () => {
    await store.close();
  });
  const limiter = (env: Record<string, string> = {}) => {
    store = createMemoryRateLimitStore();
    return new RateLimiter(store, rateLimitPoliciesOf(rateLimitConfigSchema.parse(env)), () => T);
  };

  it('has the decided defaults: 10/h per IP and email, 100/h per key, 600/min per IP for the catalog', () => {
    const { policies } = limiter();
    expect(policies.quotesPerIp).toMatchObject({ limit: 10, windowMs: 3_600_000 });
    expect(policies.quotesPerEmail).toMatchObject({ limit: 10, windowMs: 3_600_000 });
    expect(policies.quotesPerKey).toMatchObject({ limit: 100, windowMs: 3_600_000 });
    expect(policies.catalogPerIp).toMatchObject({ limit: 600, windowMs: 60_000 });
    expect(policies.catalogPerKey.limit).toBeGreaterThan(600);
  });

  it('refuses the 11th anonymous request from one IP whatever the emails, with when a request fits again', async () => {
    const rateLimiter = limiter();
    for (let n = 0; n < 10; n++) {
      expect(
        (await rateLimiter.enforce(rateLimiter.quoteChecks(undefined, '203.0.113.9', `b${n}@x.example`)))
          ?.allowed,
      ).toBe(true);
    }
    const refused = await rateLimiter.decide(
      rateLimiter.quoteChecks(undefined, '203.0.113.9', 'new@x.example'),
    );
    expect(refused).toMatchObject({
      allowed: false,
      remaining: 0,
      policy: { name: 'quotes.ip' },
      // Sliding window: 11 hits of this hour fade out during the next one; 10 or fewer after 1/11 of it.
      resetAt: T + 45 * 60_000 + 327_274,
    });
    expect(rateLimiter.secondsUntil(refused!.resetAt)).toBe(45 * 60 + 328);
    await expect(
      rateLimiter.enforce(rateLimiter.quoteChecks(undefined, '203.0.113.9', 'x@x.example')),
    ).rejects.toMatchObject({
      kind: 'rate_limited',
    });
  });

  it('counts a buyer email across IPs, case-insensitively', async () => {
    const rateLimiter = limiter({ RATE_LIMIT_QUOTES_PER_EMAIL: '2' });
    await rateLimiter.enforce(rateLimiter.quoteChecks(undefined, '198.51.100.1', 'Ada@X.example'));
    await rateLimiter.enforce(rateLimiter.quoteChecks(undefined, '198.51.100.2', 'ada@x.example'));
    const refused = await rateLimiter.decide(
      rateLimiter.quoteChecks(undefined, '198.51.100.3', ' ada@x.example'),
    );
    expect(refused).toMatchObject({ allowed: false, policy: { name: 'quotes.email', limit: 2 } });
  });

  it('counts one mailbox whatever its +tag: plus-addressing gives no fresh allowance', async () => {
    const rateLimiter = limiter({ RATE_LIMIT_QUOTES_PER_EMAIL: '2' });
    await rateLimiter.enforce(rateLimiter.quoteChecks(undefined, '198.51.100.1', 'ada+1@x.example'));
    await rateLimiter.enforce(rateLimiter.quoteChecks(undefined, '198.51.100.2', 'ada+2@x.example'));
    await expect(
      rateLimiter.enforce(rateLimiter.quoteChecks(undefined, '198.51.100.3', 'Ada+3@X.example')),
    ).rejects.toMatchObject({ kind: 'rate_limited' });
  });

  it('limits new saved searches per IP, per key, and per mailbox of their email channels', async () => {
    const rateLimiter = limiter({
      RATE_LIMIT_SUBSCRIPTIONS_PER_IP: '2',
      RATE_LIMIT_SUBSCRIPTIONS_PER_EMAIL: '3',
      RATE_LIMIT_SUBSCRIPTIONS_PER_KEY: '4',
    });
    const anonymous = (address: string, emails: string[]) =>
      rateLimiter.decide(rateLimiter.subscriptionChecks(undefined, address, emails));
    expect(await anonymous('203.0.113.1', [])).toMatchObject({ allowed: true });
    expect(await anonymous('203.0.113.1', [])).toMatchObject({ allowed: true });
    expect(await anonymous('203.0.113.1', [])).toMatchObject({
      allowed: false,
      policy: { name: 'subscriptions.ip' },
    });
    // One inbox signed up from many addresses and a key, under several spellings: the mailbox's limit holds.
    expect(await anonymous('203.0.113.2', ['victim@x.example', 'Victim+a@x.example'])).toMatchObject({
      allowed: true,
    });
    expect(await anonymous('203.0.113.3', ['victim+b@x.example'])).toMatchObject({ allowed: true });
    expect(
      await rateLimiter.decide(rateLimiter.subscriptionChecks(KEYED, '203.0.113.4', ['VICTIM@x.example'])),
    ).toMatchObject({ allowed: true, remaining: 0 });
    await expect(
      rateLimiter.enforce(rateLimiter.subscriptionChecks(TOKEN, '203.0.113.5', ['victim+c@x.example'])),
    ).rejects.toMatchObject({ kind: 'rate_limited' });
    // A key's own allowance: four searches (one above), the fifth refused.
    for (let n = 0; n < 4; n++) {
      expect(
        await rateLimiter.decide(rateLimiter.subscriptionChecks(KEYED, '203.0.113.4', [])),
      ).toMatchObject({ allowed: n < 3, policy: { name: 'subscriptions.key' } });
    }
  });

  it('reports the tightest allowance while allowed', async () => {
    const rateLimiter = limiter({ RATE_LIMIT_QUOTES_PER_EMAIL: '3' });
    const decision = await rateLimiter.decide(
      rateLimiter.quoteChecks(undefined, '198.51.100.1', 'a@x.example'),
    );
    expect(decision).toMatchObject({ allowed: true, remaining: 2, policy: { name: 'quotes.email' } });
  });

  it("gives a key its own larger allowance, and an agent token its account's", async () => {
    const rateLimiter = limiter({ RATE_LIMIT_QUOTES_PER_KEY: '2' });
    expect(rateLimiter.quoteChecks(KEYED, '203.0.113.9', 'a@x.example')).toEqual([
      { policy: rateLimiter.policies.quotesPerKey, subject: 'key:lmk_abcdefgh' },
    ]);
    expect(rateLimiter.quoteChecks(TOKEN, '203.0.113.9', 'a@x.example')[0]?.subject).toBe('account:21');
    await rateLimiter.enforce(rateLimiter.quoteChecks(KEYED, '203.0.113.9', 'a@x.example'));
    await rateLimiter.enforce(rateLimiter.quoteChecks(KEYED, '203.0.113.9', 'a@x.example'));
    await expect(
      rateLimiter.enforce(rateLimiter.quoteChecks(KEYED, '203.0.113.9', 'a@x.example')),
    ).rejects.toBeInstanceOf(AppError);
  });

  it('asks the store nothing when every limit is off (0)', async () => {
    const rateLimiter = limiter({ RATE_LIMIT_QUOTES_PER_IP: '0', RATE_LIMIT_QUOTES_PER_EMAIL: '0' });
    for (let n = 0; n < 50; n++) {
      expect(
        await rateLimiter.decide(rateLimiter.quoteChecks(undefined, '203.0.113.9', 'a@x.example')),
      ).toBeUndefined();
    }
  });
});
