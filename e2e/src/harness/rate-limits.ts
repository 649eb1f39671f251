/**
 * The gateway's rate limits turned off (0 disables a limit): the harnesses' default, so suites and benches that
 * are not about limits are never throttled. A suite about limits passes its own allowances in `env`.
 */
export const RATE_LIMITS_OFF: Readonly<Record<string, string>> = {
  RATE_LIMIT_QUOTES_PER_IP: '0',
  RATE_LIMIT_QUOTES_PER_EMAIL: '0',
  RATE_LIMIT_QUOTES_PER_KEY: '0',
  RATE_LIMIT_SUBSCRIPTIONS_PER_IP: '0',
  RATE_LIMIT_SUBSCRIPTIONS_PER_EMAIL: '0',
  RATE_LIMIT_SUBSCRIPTIONS_PER_KEY: '0',
  RATE_LIMIT_CATALOG_PER_IP: '0',
  RATE_LIMIT_CATALOG_PER_KEY: '0',
};
