import { z } from 'zod';
import { LISTING_LIMITS, SHIP_FROM_REGION_MAX_LENGTH, SHIPPING_MODES } from '@marketplace/vocabulary';

/**
 * A lot's freight terms (docs/specification.md, "Checkout and orders": freight), one definition for every way a
 * seller sets them: PUT /api/products/{id}/shipping and the `shipping` of POST and PUT /api/products take
 * `listingShippingBodySchema`; set_listing_shipping and the `shipping` of create_listing and update_listing take
 * `shippingTermsInput`, the same fields in the tools' spelling (`ship_from_region`). The gateway checks types
 * and bounds; the listing service checks which fields each mode takes and names the field it refuses.
 */
const mode = z
  .enum(SHIPPING_MODES, { error: `must be one of ${SHIPPING_MODES.join(', ')}` })
  .describe(
    'included: freight in the price; flat_per_order: cents per order; per_unit: cents per unit; ' +
      'buyer_pickup: the buyer collects from the ship-from region; quoted_on_request: buyers ask with request_quote',
  );

const cents = z
  .number({ error: 'must be a whole number of cents' })
  .int('must be a whole number of cents')
  .min(1, 'must be at least 1')
  .max(LISTING_LIMITS.maxPriceCents, `must be at most ${LISTING_LIMITS.maxPriceCents}`)
  .optional()
  .describe('flat_per_order: cents per order; per_unit: cents per unit; not sent otherwise');

const shipFromRegion = z
  .string({ error: 'must be a string' })
  .max(SHIP_FROM_REGION_MAX_LENGTH, `must be at most ${SHIP_FROM_REGION_MAX_LENGTH} characters`)
  .optional()
  .describe('buyer_pickup: where the buyer collects the lot (e.g. "Reno, NV"); not sent otherwise');

/** The freight terms in the REST spelling. */
export const listingShippingBodySchema = z
  .strictObject({ mode, cents, shipFromRegion })
  .describe('The freight terms of a lot');

/** The freight terms in the tools' spelling. */
export const shippingTermsInput = z
  .object({ mode, cents, ship_from_region: shipFromRegion })
  .describe('The freight terms of a lot');

/** The freight terms as every answer shows them (products, listings, quotes); null until set. */
export const shippingTermsOutput = z
  .object({
    mode: z.enum(SHIPPING_MODES),
    cents: z.number().int().optional().describe('flat_per_order: per order; per_unit: per unit'),
    ship_from_region: z.string().optional().describe('buyer_pickup: where the buyer collects the lot'),
  })
  .nullable();

export type ShippingTerms = z.output<typeof listingShippingBodySchema>;

/** The tools' spelling to the REST one, which the listing client takes. */
export const shippingTermsOf = (input: z.output<typeof shippingTermsInput>): ShippingTerms => ({
  mode: input.mode,
  cents: input.cents,
  shipFromRegion: input.ship_from_region,
});
