import { z } from 'zod';
import { positiveIdSchema } from '../../edge/schemas/fields.schema.js';
import { checkoutSessionSchema } from './checkout.schema.js';
import { once, optionalParameter, wholeNumber } from '../../edge/schemas/query.schema.js';

/** docs/specification.md, "Limits": tracking number and carrier at most 255 characters, tracking URL at most 2000. */
export const trackingNumberSchema = z
  .string({ error: 'must be a string' })
  .max(255, 'must be at most 255 characters');
export const carrierNameSchema = z
  .string({ error: 'must be a string' })
  .max(255, 'must be at most 255 characters');
export const trackingUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(2_000, 'must be at most 2000 characters');

export const trackingBodySchema = z.strictObject({
  tracking_number: trackingNumberSchema.optional(),
  tracking_url: trackingUrlSchema.optional(),
  carrier_name: carrierNameSchema.optional(),
});
export type TrackingBody = z.infer<typeof trackingBodySchema>;

export const DISPUTE_REASONS = ['missing_units', 'quality_issue', 'damaged', 'wrong_item', 'other'] as const;
export const REQUESTED_ACTIONS = ['refund', 'replacement', 'partial_refund'] as const;

/** open_dispute (docs/specification.md, "MCP tools", 8) without the order id, which REST carries in the path. */
export const disputeFieldsSchema = {
  reason: z.enum(DISPUTE_REASONS, { error: `must be one of ${DISPUTE_REASONS.join(', ')}` }),
  description: z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, 'must not be empty')
    .max(2_000, 'must be at most 2000 characters'),
  requested_action: z
    .enum(REQUESTED_ACTIONS, { error: `must be one of ${REQUESTED_ACTIONS.join(', ')}` })
    .optional(),
  photo_urls: z
    .array(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }), {
      error: 'must be an array of URLs',
    })
    .max(10, 'must have at most 10 items')
    .optional(),
};
export const disputeBodySchema = z.strictObject(disputeFieldsSchema);

/** Why bulk_mark_shipped left an order alone. */
export const SKIP_REASONS = ['not_found', 'already_shipped', 'not_shippable'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** The documented 400 of an order route: the id in its path is refused before any lookup. */
export const INVALID_ORDER_ID = 'The order id is not a positive whole number';

/** Of the form only: an order id beyond 2^53 − 1 names no order, 404 (http/path-ids.ts). */
export { orderIdParamsSchema } from '../../edge/http/path-ids.js';

export const orderIdsSchema = z
  .array(positiveIdSchema, { error: 'must be an array of order ids' })
  .min(1, 'must have at least 1 item')
  .max(200, 'must have at most 200 items');

const isoTime = z.string().describe('ISO 8601 time (UTC)');

export const trackingViewSchema = z.object({
  tracking_number: z.string().nullable(),
  tracking_url: z.string().nullable(),
  carrier_name: z.string().nullable(),
});

export const ORDER_STATUSES = [
  'awaiting_shipment',
  'shipped',
  'delivered',
  'issue_reported',
  'resolved',
  'completed',
  'cancelled',
] as const;

/** docs/specification.md, "Order lifecycle": pages of 1 to 100 orders, 20 by default. */
export const ORDER_PAGE = { max: 100, default: 20 } as const;

const CURSOR_PATTERN = /^[1-9][0-9]{0,15}$/;
const CURSOR_MESSAGE = 'must be the next_cursor of a previous page';

/** GET /api/orders and GET /api/seller/orders. */
export const orderListQuerySchema = z.object({
  status: optionalParameter(
    once.pipe(z.enum(ORDER_STATUSES, { error: `must be one of ${ORDER_STATUSES.join(', ')}` })),
  ),
  limit: optionalParameter(wholeNumber(1, ORDER_PAGE.max)).transform((limit) => limit ?? ORDER_PAGE.default),
  cursor: optionalParameter(once.regex(CURSOR_PATTERN, CURSOR_MESSAGE)),
});

/** The same filter as tool arguments (list_my_orders, get_seller_orders). */
export const orderListArguments = {
  status: z
    .enum(ORDER_STATUSES, { error: `must be one of ${ORDER_STATUSES.join(', ')}` })
    .optional()
    .describe('only orders in this state; all when absent'),
  limit: z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(ORDER_PAGE.max, `must be at most ${ORDER_PAGE.max}`)
    .default(ORDER_PAGE.default),
  cursor: z
    .string({ error: 'must be a string' })
    .regex(CURSOR_PATTERN, CURSOR_MESSAGE)
    .optional()
    .describe('next_cursor of the previous page; absent for the first page'),
};

export const DISPUTE_FILTERS = ['open', 'resolved', 'all'] as const;

/** GET /api/admin/disputes. */
export const disputeListQuerySchema = z.object({
  status: optionalParameter(
    once.pipe(z.enum(DISPUTE_FILTERS, { error: `must be one of ${DISPUTE_FILTERS.join(', ')}` })),
  ).transform((status) => status ?? 'open'),
  limit: optionalParameter(wholeNumber(1, ORDER_PAGE.max)).transform((limit) => limit ?? ORDER_PAGE.default),
  cursor: optionalParameter(once.regex(CURSOR_PATTERN, CURSOR_MESSAGE)),
});

/** Why an order is cancelled; optional for the buyer, advisable for the seller. */
export const cancelReasonSchema = z
  .string({ error: 'must be a string' })
  .max(1_000, 'must be at most 1000 characters');

export const cancelBodySchema = z.strictObject({ reason: cancelReasonSchema.optional() });

export const DISPUTE_RESOLUTIONS = ['refunded', 'partially_refunded', 'replaced', 'rejected'] as const;

/** POST /api/admin/disputes/{id}/resolve (docs/specification.md, "Disputes"). */
export const resolveDisputeBodySchema = z
  .strictObject({
    resolution: z.enum(DISPUTE_RESOLUTIONS, { error: `must be one of ${DISPUTE_RESOLUTIONS.join(', ')}` }),
    refund_amount: z
      .number({ error: 'must be a whole number of cents' })
      .int('must be a whole number of cents')
      .min(1, 'must be at least 1')
      .max(Number.MAX_SAFE_INTEGER, 'is too large')
      .optional()
      .describe('cents, only with partially_refunded: at most the order total'),
    note: z
      .string({ error: 'must be a string' })
      .trim()
      .min(1, 'must not be empty')
      .max(2_000, 'must be at most 2000 characters')
      .describe('the operator’s explanation, emailed to both parties'),
  })
  .superRefine((body, context) => {
    if (body.resolution === 'partially_refunded' && body.refund_amount === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['refund_amount'],
        message: 'is required with partially_refunded',
      });
    }
    if (body.resolution !== 'partially_refunded' && body.refund_amount !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['refund_amount'],
        message: 'is only given with partially_refunded',
      });
    }
  });
export type ResolveDisputeBody = z.infer<typeof resolveDisputeBodySchema>;

/** An order as its buyer and its seller see it (docs/specification.md, "Checkout and orders": status, tracking, inspection and ship-by deadlines). */
export const orderViewSchema = z.object({
  order_id: z.number().int(),
  status: z.enum(ORDER_STATUSES),
  product_id: z.string(),
  product_name: z.string(),
  seller_id: z.number().int(),
  quantity: z.number().int(),
  unit_price: z.number().int().describe('cents per unit'),
  freight: z.number().int().describe('cents of freight within total'),
  total: z.number().int().describe('cents: goods and freight'),
  currency: z.string(),
  quote_request_id: z.number().int().nullable(),
  shipping_country: z.string().nullable(),
  payment_terms: z.string(),
  placed_at: isoTime,
  ship_by: isoTime,
  tracking: trackingViewSchema.nullable(),
  shipped_at: isoTime.nullable(),
  delivered_at: isoTime.nullable(),
  inspection_deadline: isoTime.nullable().describe('end of the 48 h inspection window once delivered'),
  completed_at: isoTime.nullable(),
  issue: z
    .object({
      reason: z.string(),
      description: z.string(),
      requested_action: z.string().nullable(),
      photo_urls: z.array(z.string()),
      reported_at: isoTime,
    })
    .nullable(),
  cancellation: z
    .object({
      by: z.enum(['buyer', 'seller']),
      reason: z.string().nullable(),
      cancelled_at: isoTime,
    })
    .nullable()
    .describe('set once cancelled'),
  resolution: z
    .object({
      resolution: z.enum(DISPUTE_RESOLUTIONS),
      refund_amount: z.number().int().describe('cents refunded; 0 when replaced or rejected'),
      note: z.string(),
      resolved_at: isoTime,
    })
    .nullable()
    .describe('set once the operator resolved the dispute'),
});
export type OrderView = z.infer<typeof orderViewSchema>;

export const completedCheckoutSchema = z.object({
  checkout: checkoutSessionSchema,
  orders: z.array(orderViewSchema),
});

/** A page of orders, newest first. */
export const orderPageSchema = z.object({
  orders: z.array(orderViewSchema),
  next_cursor: z.string().nullable().describe('pass as cursor for the next page; null on the last page'),
});
