import { describe, expect, it } from '@jest/globals';
import type { z } from 'zod';
import { listMyListingsInput } from '../src/contexts/listings/listing.tools.js';
import { sellerListingsQuerySchema } from '../src/contexts/listings/seller-listings.schema.js';
import { violationsOf } from '../src/edge/schemas/validate.js';

/** The violations of a rejected input, as the REST problem and the tool error list them. */
const rejected = (schema: z.ZodType, input: Record<string, unknown>) => {
  const result = schema.safeParse(input);
  if (result.success) throw new Error(`accepted ${JSON.stringify(input)}`);
  return violationsOf(result.error);
};

describe('the filters of GET /api/products and list_my_listings', () => {
  const schemas = [
    ['GET /api/products', sellerListingsQuerySchema],
    ['list_my_listings', listMyListingsInput],
  ] as const;

  it.each(schemas)('%s refuses an updated_since before 1970 under its own name', (_, schema) => {
    for (const time of ['1969-12-31T23:59:59Z', '0001-01-01T00:00:00Z', '1970-01-01T00:30:00+01:00']) {
      expect(rejected(schema, { updated_since: time })).toEqual([
        { path: 'updated_since', message: 'must be 1970-01-01T00:00:00Z or later' },
      ]);
    }
  });

  it.each(schemas)('%s takes 1970 itself and a time far ahead (an empty page)', (_, schema) => {
    for (const time of ['1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) {
      expect(schema.safeParse({ updated_since: time }).success).toBe(true);
    }
  });
});
