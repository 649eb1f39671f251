import { z } from 'zod';
import { BULK_THRESHOLD_DEFAULTS } from '@marketplace/vocabulary';

/** The order service's own environment variables (the embedded runner passes the same names). */
export const orderSettingsSchema = z.object({
  /** docs/specification.md, "Checkout and orders": a line of more than this many units goes through a quote. */
  CHECKOUT_BULK_MAX_UNITS: z.coerce.number().int().min(1).default(BULK_THRESHOLD_DEFAULTS.moreThanUnits),
  /** ... or of more than this subtotal, in cents. */
  CHECKOUT_BULK_MAX_SUBTOTAL_CENTS: z.coerce
    .number()
    .int()
    .min(1)
    .default(BULK_THRESHOLD_DEFAULTS.moreThanSubtotalCents),
  /** How long a checkout session can be completed; default 30 minutes. */
  CHECKOUT_SESSION_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(7 * 24 * 3_600_000)
    .default(30 * 60_000),
  /** How often delivered orders past their inspection deadline are completed; default every minute. */
  ORDER_COMPLETION_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** Where dispute notifications go; unset: they stay queued (and a warning is logged) until it is set. */
  ADMIN_EMAIL: z.email().optional(),
});

export type OrderSettings = z.infer<typeof orderSettingsSchema>;
