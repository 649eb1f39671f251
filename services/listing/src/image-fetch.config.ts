import { z } from 'zod';
import { OUTBOUND_LIMITS } from '@marketplace/outbound-http';
import { BULK_UPSERT_LIMITS } from '@marketplace/vocabulary';
import type { ImageFetchLimits } from './application/host-images.js';
import { IMAGE_FETCH_LIMITS } from './application/host-images.js';

/**
 * The bounds of image fetches (docs/specification.md, "Listings" → Images). A call's budget stays below the
 * bulk call's deadline, so that a bulk call whose hosts hang still answers with its per-item errors.
 */
export const imageFetchConfigSchema = z.object({
  IMAGE_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(OUTBOUND_LIMITS.timeoutMs),
  IMAGE_FETCHES_AT_ONCE: z.coerce.number().int().min(1).max(64).default(IMAGE_FETCH_LIMITS.fetchesAtOnce),
  IMAGE_FETCH_CALL_BUDGET_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(BULK_UPSERT_LIMITS.callDeadlineMs / 2)
    .default(IMAGE_FETCH_LIMITS.callBudgetMs),
});

/** The listing service's `imageFetch` option from the configuration. */
export const imageFetchOptionsOf = (
  config: z.infer<typeof imageFetchConfigSchema>,
): ImageFetchLimits & { readonly timeoutMs: number } => ({
  timeoutMs: config.IMAGE_FETCH_TIMEOUT_MS,
  fetchesAtOnce: config.IMAGE_FETCHES_AT_ONCE,
  callBudgetMs: config.IMAGE_FETCH_CALL_BUDGET_MS,
});
