export * from './ratelimit.port.js';
export { createMemoryRateLimitStore } from './memory.rate-limit-store.js';
export { createPostgresRateLimitStore, rateLimitMigrations } from './postgres.rate-limit-store.js';
