import { z } from 'zod';
import { parseProductId } from '@marketplace/platform';
import { isCountryCode } from '@marketplace/vocabulary';

// The fields several contexts take (a product, a quantity, an id, a country), ruled once so that REST and
// MCP refuse the same values with the same messages everywhere.

/** A sanity bound on one line, far above any bulk threshold (such lines are escalated, not refused). */
export const MAX_LINE_QUANTITY = 1_000_000;

/** `product_<n>` with n a safe integer, so no id beyond 2^53 travels on (docs/security.md, "Hostile input"). */
export const productIdSchema = z
  .string({ error: 'must be a string' })
  .regex(/^product_[1-9][0-9]{0,15}$/, { message: 'must look like product_<number>', abort: true })
  .refine((id) => parseProductId(id) !== undefined, `must number at most ${Number.MAX_SAFE_INTEGER}`);

export const quantitySchema = z
  .number({ error: 'must be a whole number' })
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(MAX_LINE_QUANTITY, `must be at most ${MAX_LINE_QUANTITY}`);

export const positiveIdSchema = z
  .number({ error: 'must be a whole number' })
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(Number.MAX_SAFE_INTEGER, 'is too large');

export const countryCodeSchema = z
  .string({ error: 'must be a string' })
  .refine(isCountryCode, 'must be an ISO 3166-1 alpha-2 country code in upper case, e.g. US or DE');
