import { z } from 'zod';

const allowance = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/**
 * The gateway's rate limits (docs/specification.md, "Quotes"; defaults as decided). Every allowance is per window; 0 turns
 * that limit off (benches and e2e suites that are not about limits do). `RATE_LIMIT_STORE` picks where counters
 * live: `memory` (one process: embedded mode) or `postgres` (shared by every replica: cluster mode).
 */
export const rateLimitConfigSchema = z.object({
  RATE_LIMIT_STORE: z.enum(['memory', 'postgres']).optional(),
  /** Anonymous quote requests per client IP per hour. */
  RATE_LIMIT_QUOTES_PER_IP: allowance(10),
  /** Anonymous quote requests per buyer email per hour. */
  RATE_LIMIT_QUOTES_PER_EMAIL: allowance(10),
  /** Quote requests per API key (or per buyer account, with an agent token) per hour. */
  RATE_LIMIT_QUOTES_PER_KEY: allowance(100),
  /** Anonymous saved searches (`POST /api/subscriptions`, subscribe_to_query) per client IP per hour. */
  RATE_LIMIT_SUBSCRIPTIONS_PER_IP: allowance(10),
  /** Saved searches naming one mailbox (case and `+tag` folded) in an email channel, per hour, whoever asks. */
  RATE_LIMIT_SUBSCRIPTIONS_PER_EMAIL: allowance(5),
  /** Saved searches per API key (or per buyer account, with an agent token) per hour. */
  RATE_LIMIT_SUBSCRIPTIONS_PER_KEY: allowance(100),
  /** Anonymous catalog reads (REST catalog, MCP transports) per client IP per minute. */
  RATE_LIMIT_CATALOG_PER_IP: allowance(600),
  /** Catalog reads per API key (or buyer account) per minute. */
  RATE_LIMIT_CATALOG_PER_KEY: allowance(6_000),
  /**
   * How many reverse proxies in front of the gateway set X-Forwarded-For (Express's `trust proxy` hop count), so
   * the client IP is the caller's and not the ingress's; 0 (default) uses the connection's address.
   */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
});

export type RateLimitConfig = z.infer<typeof rateLimitConfigSchema>;
