import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request, RequestHandler, Response } from 'express';
import { AppError, mailboxOf } from '@marketplace/platform';
import type { Database } from '@marketplace/database';
import type { RateLimitStore } from '@marketplace/ratelimit';
import { createMemoryRateLimitStore, createPostgresRateLimitStore } from '@marketplace/ratelimit';
import type { Principal } from '../account.js';
import { principalOf } from './auth.middleware.js';
import type { RateLimitConfig } from './rate-limit.config.js';
import { rateLimitConfigSchema } from './rate-limit.config.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** One limit: at most `limit` hits per `windowMs` for each subject (an IP, an email, a key). */
export interface RateLimitPolicy {
  /** Part of the counter's key, so policies never share counters. */
  readonly name: string;
  /** 0: no limit. */
  readonly limit: number;
  readonly windowMs: number;
}

export interface RateLimitCheck {
  readonly policy: RateLimitPolicy;
  readonly subject: string;
}

/** The outcome for the request: the tightest of its checks. */
export interface RateLimitDecision {
  readonly allowed: boolean;
  readonly policy: RateLimitPolicy;
  readonly remaining: number;
  readonly resetAt: number;
}

export interface GatewayRateLimitPolicies {
  readonly quotesPerIp: RateLimitPolicy;
  readonly quotesPerEmail: RateLimitPolicy;
  readonly quotesPerKey: RateLimitPolicy;
  readonly subscriptionsPerIp: RateLimitPolicy;
  readonly subscriptionsPerEmail: RateLimitPolicy;
  readonly subscriptionsPerKey: RateLimitPolicy;
  readonly catalogPerIp: RateLimitPolicy;
  readonly catalogPerKey: RateLimitPolicy;
}

export const rateLimitPoliciesOf = (config: RateLimitConfig): GatewayRateLimitPolicies => ({
  quotesPerIp: { name: 'quotes.ip', limit: config.RATE_LIMIT_QUOTES_PER_IP, windowMs: HOUR_MS },
  quotesPerEmail: { name: 'quotes.email', limit: config.RATE_LIMIT_QUOTES_PER_EMAIL, windowMs: HOUR_MS },
  quotesPerKey: { name: 'quotes.key', limit: config.RATE_LIMIT_QUOTES_PER_KEY, windowMs: HOUR_MS },
  subscriptionsPerIp: {
    name: 'subscriptions.ip',
    limit: config.RATE_LIMIT_SUBSCRIPTIONS_PER_IP,
    windowMs: HOUR_MS,
  },
  subscriptionsPerEmail: {
    name: 'subscriptions.email',
    limit: config.RATE_LIMIT_SUBSCRIPTIONS_PER_EMAIL,
    windowMs: HOUR_MS,
  },
  subscriptionsPerKey: {
    name: 'subscriptions.key',
    limit: config.RATE_LIMIT_SUBSCRIPTIONS_PER_KEY,
    windowMs: HOUR_MS,
  },
  catalogPerIp: { name: 'catalog.ip', limit: config.RATE_LIMIT_CATALOG_PER_IP, windowMs: MINUTE_MS },
  catalogPerKey: { name: 'catalog.key', limit: config.RATE_LIMIT_CATALOG_PER_KEY, windowMs: MINUTE_MS },
});

/**
 * Who a verified caller is for its allowance: the API key (docs/security.md: 100 per hour per key), or the buyer
 * account behind an agent token (tokens are cheap to mint; the account is what holds the allowance).
 */
const allowanceHolderOf = (caller: Principal): string =>
  caller.credential.kind === 'api_key' ? `key:${caller.credential.keyPrefix}` : `account:${caller.accountId}`;

/** The gateway's rate limiter: the policies as decided, counted in a RateLimitStore. */
export class RateLimiter {
  /** The store is closed by whoever opened it (see `openRateLimiter`). */
  constructor(
    private readonly store: RateLimitStore,
    readonly policies: GatewayRateLimitPolicies,
    private readonly now: () => number = Date.now,
  ) {}

  /** Every limit off: what a gateway started without rate-limit settings (unit and integration tests) uses. */
  static off(): RateLimiter {
    const off = rateLimitConfigSchema.parse({
      RATE_LIMIT_QUOTES_PER_IP: 0,
      RATE_LIMIT_QUOTES_PER_EMAIL: 0,
      RATE_LIMIT_QUOTES_PER_KEY: 0,
      RATE_LIMIT_SUBSCRIPTIONS_PER_IP: 0,
      RATE_LIMIT_SUBSCRIPTIONS_PER_EMAIL: 0,
      RATE_LIMIT_SUBSCRIPTIONS_PER_KEY: 0,
      RATE_LIMIT_CATALOG_PER_IP: 0,
      RATE_LIMIT_CATALOG_PER_KEY: 0,
    });
    return new RateLimiter(createMemoryRateLimitStore(), rateLimitPoliciesOf(off));
  }

  /**
   * Anonymous: per client IP and per buyer mailbox (`mailboxOf`: `Ada+1@X` counts as `ada@x`); verified: per key
   * (a key raises the allowance).
   */
  quoteChecks(caller: Principal | undefined, clientAddress: string, buyerEmail: string): RateLimitCheck[] {
    if (caller !== undefined)
      return [{ policy: this.policies.quotesPerKey, subject: allowanceHolderOf(caller) }];
    return [
      { policy: this.policies.quotesPerIp, subject: clientAddress },
      { policy: this.policies.quotesPerEmail, subject: mailboxOf(buyerEmail) },
    ];
  }

  /**
   * A new saved search: per client IP (anonymous) or per key, and per mailbox of each email channel whoever
   * asks, so no caller, and no number of callers, can sign one inbox up for many searches (docs/security.md,
   * "API6").
   */
  subscriptionChecks(
    caller: Principal | undefined,
    clientAddress: string,
    channelEmails: readonly string[],
  ): RateLimitCheck[] {
    const mailboxes = [...new Set(channelEmails.map(mailboxOf))];
    return [
      caller === undefined
        ? { policy: this.policies.subscriptionsPerIp, subject: clientAddress }
        : { policy: this.policies.subscriptionsPerKey, subject: allowanceHolderOf(caller) },
      ...mailboxes.map((mailbox) => ({ policy: this.policies.subscriptionsPerEmail, subject: mailbox })),
    ];
  }

  catalogChecks(caller: Principal | undefined, clientAddress: string): RateLimitCheck[] {
    return caller === undefined
      ? [{ policy: this.policies.catalogPerIp, subject: clientAddress }]
      : [{ policy: this.policies.catalogPerKey, subject: allowanceHolderOf(caller) }];
  }

  /** Counts the request against every enabled check; undefined when none is enabled. */
  async decide(checks: readonly RateLimitCheck[]): Promise<RateLimitDecision | undefined> {
    const enabled = checks.filter(({ policy }) => policy.limit > 0);
    if (enabled.length === 0) return undefined;
    const counts = await this.store.hit(
      enabled.map(({ policy, subject }) => ({
        key: `${policy.name}:${subject}`,
        windowMs: policy.windowMs,
        limit: policy.limit,
      })),
      this.now(),
    );
    let tightest: RateLimitDecision | undefined;
    enabled.forEach(({ policy }, index) => {
      const { count, resetAt } = counts[index] ?? { count: 0, resetAt: 0 };
      const decision = {
        allowed: count <= policy.limit,
        policy,
        remaining: Math.max(0, policy.limit - count),
        resetAt,
      };
      // A refusal wins over an allowance; among equals, the one with the least left.
      if (
        tightest === undefined ||
        (tightest.allowed && !decision.allowed) ||
        (tightest.allowed === decision.allowed && decision.remaining < tightest.remaining)
      ) {
        tightest = decision;
      }
    });
    return tightest;
  }

  /** Throws AppError('rate_limited') when the checks refuse the request; for callers without a response (tools). */
  async enforce(checks: readonly RateLimitCheck[]): Promise<RateLimitDecision | undefined> {
    const decision = await this.decide(checks);
    if (decision !== undefined && !decision.allowed) throw this.refusal(decision);
    return decision;
  }

  /** Whole seconds until the decision's `resetAt`, at least 1 (Retry-After and RateLimit-Reset). */
  secondsUntil(resetAt: number): number {
    return Math.max(1, Math.ceil((resetAt - this.now()) / 1_000));
  }

  refusal(decision: RateLimitDecision): AppError {
    const { limit, windowMs } = decision.policy;
    const window = windowMs % HOUR_MS === 0 ? `${windowMs / HOUR_MS} h` : `${windowMs / MINUTE_MS} min`;
    return new AppError(
      'rate_limited',
      `rate limit of ${limit} per ${window} reached; retry in ${this.secondsUntil(decision.resetAt)} s` +
        ' (an API key raises the allowance)',
    );
  }
}

/**
 * The IETF httpapi draft's separate fields (draft-ietf-httpapi-ratelimit-headers up to -06, as most clients and
 * express-rate-limit read them): RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (seconds until the whole
 * allowance is back, or on a refusal until the next request fits: the sliding window's `resetAt`) and
 * RateLimit-Policy (`<limit>;w=<window seconds>`). Chosen over the newer combined structured field
 * because clients parse these today; on 429, Retry-After (seconds) as well.
 */
export const setRateLimitHeaders = (
  res: Response,
  decision: RateLimitDecision,
  resetSeconds: number,
): void => {
  res.set('RateLimit-Limit', String(decision.policy.limit));
  res.set('RateLimit-Remaining', String(decision.remaining));
  res.set('RateLimit-Reset', String(resetSeconds));
  res.set('RateLimit-Policy', `${decision.policy.limit};w=${decision.policy.windowMs / 1_000}`);
  if (!decision.allowed) res.set('Retry-After', String(resetSeconds));
};

/**
 * A middleware that counts each request against `checksOf(req)` and answers 429 (an RFC 9457 problem) with
 * Retry-After when refused. Mount it after authentication, so a verified caller gets its own allowance.
 */
export const rateLimit =
  (limiter: RateLimiter, checksOf: (req: Request) => readonly RateLimitCheck[]): RequestHandler =>
  async (req, res, next) => {
    const decision = await limiter.decide(checksOf(req));
    if (decision !== undefined) {
      setRateLimitHeaders(res, decision, limiter.secondsUntil(decision.resetAt));
      if (!decision.allowed) throw limiter.refusal(decision);
    }
    next();
  };

/**
 * Catalog reads (REST catalog, and the MCP transports, whose tools are mostly reads): authenticates an optional
 * key or token first, so a verified caller gets the larger allowance.
 */
export const catalogReadLimit = (
  authenticateOptional: RequestHandler,
  limiter: RateLimiter,
): RequestHandler[] => [
  authenticateOptional,
  rateLimit(limiter, (req) => limiter.catalogChecks(principalOf(req), clientAddressOfRequest(req))),
];

const clientAddresses = new AsyncLocalStorage<string>();

/** The client IP of a request (Express's `req.ip`, which honours `trust proxy`). */
export const clientAddressOfRequest = (req: Request): string =>
  req.ip ?? req.socket.remoteAddress ?? 'unknown';

/**
 * Keeps the request's client IP for the code it calls (tools have no request), so the request_quote tool counts
 * anonymous callers per IP on every transport. Mount it once, before the routes.
 */
export const clientAddressContext: RequestHandler = (req, _res, next) => {
  clientAddresses.run(clientAddressOfRequest(req), next);
};

/** The client IP of the request being served; 'unknown' outside one (e.g. a tool called from a test). */
export const currentClientAddress = (): string => clientAddresses.getStore() ?? 'unknown';

/** The schema of the PostgreSQL store's counters in the gateway's database. */
export const RATE_LIMIT_SCHEMA = 'ratelimit';

/**
 * The limiter the settings name: counters in process (`memory`) or in the gateway's PostgreSQL database
 * (`postgres`, shared by replicas); `RATE_LIMIT_STORE` unset takes `defaultStore`. `close()` releases the store.
 */
export const openRateLimiter = async (
  config: RateLimitConfig,
  options: {
    readonly db: Database;
    readonly now: () => number;
    readonly defaultStore: 'memory' | 'postgres';
  },
): Promise<{ readonly limiter: RateLimiter; close(): Promise<void> }> => {
  const kind = config.RATE_LIMIT_STORE ?? options.defaultStore;
  const store =
    kind === 'postgres'
      ? await createPostgresRateLimitStore({ db: options.db, schema: RATE_LIMIT_SCHEMA, clock: options.now })
      : createMemoryRateLimitStore({ clock: options.now });
  return {
    limiter: new RateLimiter(store, rateLimitPoliciesOf(config), options.now),
    close: () => store.close(),
  };
};
