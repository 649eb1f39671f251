import { z } from 'zod';
import { buyerCompanySchema, buyerEmailSchema, buyerNameSchema } from './checkout.schema.js';
import {
  countryCodeSchema,
  positiveIdSchema,
  productIdSchema,
  quantitySchema,
} from '../../edge/schemas/fields.schema.js';
import {
  cancelReasonSchema,
  carrierNameSchema,
  disputeFieldsSchema,
  orderListArguments,
  orderPageSchema,
  orderIdsSchema,
  orderViewSchema,
  SKIP_REASONS,
  trackingNumberSchema,
  trackingUrlSchema,
} from './order.schema.js';
import { idempotencyKeyArgument } from '../../edge/schemas/idempotency-key.schema.js';
import type { OrderOperations } from './order.operations.js';
import type { Tool } from '../../edge/mcp/tool.js';

/** quick_buy (docs/specification.md, "MCP tools"). */
export const quickBuyInput = z.object({
  product_id: productIdSchema,
  quantity: quantitySchema,
  buyer_email: buyerEmailSchema,
  buyer_name: buyerNameSchema.optional(),
  buyer_company: buyerCompanySchema.optional(),
  shipping_country: countryCodeSchema.optional(),
  idempotency_key: idempotencyKeyArgument,
  quote_request_id: positiveIdSchema
    .optional()
    .describe('your accepted or countered quote of this product: bought at its agreed price, used once'),
});

export const getOrderStatusInput = z.object({ order_id: positiveIdSchema });

export const openDisputeInput = z.object({ order_id: positiveIdSchema, ...disputeFieldsSchema });

export const listOrdersInput = z.strictObject(orderListArguments);
export const confirmOrderInput = z.object({ order_id: positiveIdSchema });
export const cancelOrderInput = z.object({
  order_id: positiveIdSchema,
  reason: cancelReasonSchema.optional().describe('why, told to the other party'),
});
export const sellerCancelOrderInput = z.object({
  order_id: positiveIdSchema,
  reason: cancelReasonSchema
    .trim()
    .min(1, 'must not be empty')
    .describe('why it cannot be fulfilled, told to the buyer'),
});

export const bulkMarkShippedInput = z.object({
  order_ids: orderIdsSchema,
  tracking_number: trackingNumberSchema.optional(),
  tracking_url: trackingUrlSchema.optional(),
  carrier_name: carrierNameSchema.optional(),
});

export const bulkExportOrdersInput = z.object({ order_ids: orderIdsSchema });

export const sellerInboxSummariseInput = z.object({
  window_hours: z
    .number({ error: 'must be a whole number of hours' })
    .int('must be a whole number of hours')
    .min(1, 'must be at least 1')
    .max(168, 'must be at most 168')
    .default(24),
  limit: z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(50, 'must be at most 50')
    .default(10),
});

export const quickBuyOutput = z.object({ checkout_id: z.string(), order: orderViewSchema });
const orderStatusOutput = orderViewSchema;
const bulkMarkShippedOutput = z.object({
  updated: z.array(orderViewSchema),
  updated_order_ids: z.array(z.number().int()),
  skipped: z.array(
    z.object({
      order_id: z.number().int(),
      reason: z.enum(SKIP_REASONS),
      message: z.string(),
    }),
  ),
});
const bulkExportOutput = z.object({
  csv: z
    .string()
    .describe('RFC 4180, CRLF line ends; columns Order ID, Product, Buyer, Quantity, Total, Status, Date'),
  row_count: z.number().int(),
  not_found_order_ids: z.array(z.number().int()).describe('ids that are not orders of this seller'),
});
const inboxOutput = z.object({
  window_hours: z.number().int(),
  generated_at: z.string(),
  summary: z.string(),
  new_orders: z.object({
    total: z.number().int(),
    items: z.array(
      z.object({
        order_id: z.number().int(),
        product_id: z.string(),
        product_name: z.string(),
        quantity: z.number().int(),
        total: z.number().int().describe('cents'),
        placed_at: z.string(),
        ship_by: z.string(),
      }),
    ),
  }),
  pending_quotes: z.object({
    total: z.number().int(),
    items: z.array(
      z.object({
        quote_request_id: z.number().int(),
        product_id: z.string(),
        product_name: z.string(),
        quantity: z.number().int(),
        target_price: z.number().int().nullable(),
        buyer_email: z.string(),
        created_at: z.string(),
      }),
    ),
  }),
  at_risk_orders: z.object({
    total: z.number().int(),
    items: z.array(
      z.object({
        order_id: z.number().int(),
        product_id: z.string(),
        product_name: z.string(),
        quantity: z.number().int(),
        ship_by: z.string(),
        hours_left: z.number(),
        overdue: z.boolean(),
      }),
    ),
  }),
  issues_reported: z.object({
    total: z.number().int(),
    items: z.array(
      z.object({
        order_id: z.number().int(),
        product_id: z.string(),
        product_name: z.string(),
        reason: z.string(),
        requested_action: z.string().nullable(),
        description: z.string(),
        reported_at: z.string(),
      }),
    ),
  }),
});

/** Tools have no request id of their own: the order events carry this correlation id. */
const TOOL_CORRELATION = 'mcp-tool';

export const quickBuyTool = (
  orders: OrderOperations,
): Tool<typeof quickBuyInput, z.infer<typeof quickBuyOutput>> => ({
  name: 'quick_buy',
  examples: [
    {
      product_id: 'product_12',
      quantity: 10,
      buyer_email: 'purchasing@buyer.example',
      buyer_company: 'Buyer Co',
      shipping_country: 'US',
      idempotency_key: 'order-2026-11-26-0001',
    },
  ],
  description:
    'Buy a lot at once at its listed price, on invoice terms (net 30), for listings whose seller enabled instant ' +
    'checkout and orders under the bulk threshold (100 units or $5,000 per line) and within stock; otherwise the ' +
    'answer says to use request_quote. Stock is reserved when the order is placed. Needs the buyer key or agent token. ' +
    'Send an idempotency_key to retry safely after a timeout: a repeat answers the same order. With ' +
    'quote_request_id, buys your agreed quote of the product at its price instead (no instant checkout needed).',
  inputSchema: quickBuyInput,
  outputSchema: quickBuyOutput,
  auth: 'buyer',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: (principal, input) => orders.quickBuy(principal, input, TOOL_CORRELATION),
});

export const getOrderStatusTool = (
  orders: OrderOperations,
): Tool<typeof getOrderStatusInput, z.infer<typeof orderStatusOutput>> => ({
  name: 'get_order_status',
  examples: [{ order_id: 41 }],
  description:
    "Status, tracking and inspection deadline of one of the caller's own orders (the buyer's API key or agent " +
    "token); another buyer's order is not found.",
  inputSchema: getOrderStatusInput,
  outputSchema: orderStatusOutput,
  auth: 'buyer',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) => orders.buyerOrder(principal, input.order_id),
});

/** Typical arguments of open_dispute; /openapi.json reuses them where a route takes the same fields. */
export const OPEN_DISPUTE_EXAMPLES = [
  {
    order_id: 41,
    reason: 'damaged',
    description: 'Two of the ten units arrived with cracked housings.',
    requested_action: 'partial_refund',
  },
];

export const openDisputeTool = (
  orders: OrderOperations,
): Tool<typeof openDisputeInput, z.infer<typeof orderStatusOutput>> => ({
  name: 'open_dispute',
  examples: OPEN_DISPUTE_EXAMPLES,
  description:
    "Report a problem with one of the caller's delivered orders within its 48 h inspection window: the order " +
    'moves to issue_reported (it no longer completes by itself) and the marketplace operator is emailed the report.',
  inputSchema: openDisputeInput,
  outputSchema: orderStatusOutput,
  auth: 'buyer',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (principal, input) => orders.openDispute(principal, input, TOOL_CORRELATION),
});

export const listMyOrdersTool = (
  orders: OrderOperations,
): Tool<typeof listOrdersInput, z.infer<typeof orderPageSchema>> => ({
  name: 'list_my_orders',
  examples: [{ status: 'shipped', limit: 20 }],
  description:
    "The caller's own orders (buyer API key or agent token), newest first, optionally only those in one status " +
    '(awaiting_shipment, shipped, delivered, issue_reported, resolved, completed, cancelled); pass next_cursor as ' +
    'cursor for the next page (limit 1-100, default 20).',
  inputSchema: listOrdersInput,
  outputSchema: orderPageSchema,
  auth: 'buyer',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) => orders.listMine(principal, input),
});

export const confirmOrderTool = (
  orders: OrderOperations,
): Tool<typeof confirmOrderInput, z.infer<typeof orderStatusOutput>> => ({
  name: 'confirm_order',
  examples: [{ order_id: 41 }],
  description:
    "Confirm receipt of one of the caller's delivered orders before its 48 h inspection deadline: the order is " +
    'completed at once (it can then no longer be disputed). Confirming a completed order answers it unchanged.',
  inputSchema: confirmOrderInput,
  outputSchema: orderStatusOutput,
  auth: 'buyer',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) => orders.confirm(principal, input.order_id, TOOL_CORRELATION),
});

/** Typical arguments of cancel_order; /openapi.json reuses them where a route takes the same fields. */
export const CANCEL_ORDER_EXAMPLES = [{ order_id: 41, reason: 'Ordered the wrong lot.' }];

export const cancelOrderTool = (
  orders: OrderOperations,
): Tool<typeof cancelOrderInput, z.infer<typeof orderStatusOutput>> => ({
  name: 'cancel_order',
  examples: CANCEL_ORDER_EXAMPLES,
  description:
    "Cancel one of the caller's orders that is still awaiting shipment: it becomes cancelled, its units go back " +
    'into stock and buyer and seller are emailed. Once shipped it cannot be cancelled (use open_dispute after ' +
    'delivery). Cancelling a cancelled order answers it unchanged.',
  inputSchema: cancelOrderInput,
  outputSchema: orderStatusOutput,
  auth: 'buyer',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  handler: (principal, input) =>
    orders.cancel(principal, 'buyer', input.order_id, input.reason, TOOL_CORRELATION),
});

export const getSellerOrdersTool = (
  orders: OrderOperations,
): Tool<typeof listOrdersInput, z.infer<typeof orderPageSchema>> => ({
  name: 'get_seller_orders',
  examples: [{ status: 'awaiting_shipment', limit: 20 }],
  description:
    "The seller's own orders, newest first, optionally only those in one status (e.g. awaiting_shipment for " +
    'what to ship); pass next_cursor as cursor for the next page (limit 1-100, default 20).',
  inputSchema: listOrdersInput,
  outputSchema: orderPageSchema,
  auth: 'seller',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) => orders.listSellers(principal, input),
});

/** Typical arguments of seller_cancel_order; /openapi.json reuses them where a route takes the same fields. */
export const SELLER_CANCEL_ORDER_EXAMPLES = [
  { order_id: 41, reason: 'The lot was damaged in our warehouse.' },
];

export const sellerCancelOrderTool = (
  orders: OrderOperations,
): Tool<typeof sellerCancelOrderInput, z.infer<typeof orderStatusOutput>> => ({
  name: 'seller_cancel_order',
  examples: SELLER_CANCEL_ORDER_EXAMPLES,
  description:
    "Cancel one of the seller's orders awaiting shipment that it cannot fulfil, saying why: the order becomes " +
    'cancelled, its units go back into stock and buyer and seller are emailed. A shipped order cannot be ' +
    'cancelled. Cancelling a cancelled order answers it unchanged.',
  inputSchema: sellerCancelOrderInput,
  outputSchema: orderStatusOutput,
  auth: 'seller',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  handler: (principal, input) =>
    orders.cancel(principal, 'seller', input.order_id, input.reason, TOOL_CORRELATION),
});

/** Typical arguments of bulk_mark_shipped; /openapi.json reuses them where a route takes the same fields. */
export const BULK_MARK_SHIPPED_EXAMPLES = [
  { order_ids: [41, 42], tracking_number: '1Z999AA10123456784', carrier_name: 'UPS' },
];

export const bulkMarkShippedTool = (
  orders: OrderOperations,
): Tool<typeof bulkMarkShippedInput, z.infer<typeof bulkMarkShippedOutput>> => ({
  name: 'bulk_mark_shipped',
  examples: BULK_MARK_SHIPPED_EXAMPLES,
  description:
    "Mark up to 200 of the seller's orders awaiting shipment as shipped with the tracking details. Ids that are " +
    "not the seller's orders, or that cannot be shipped, are skipped with a reason; repeating a call changes nothing.",
  inputSchema: bulkMarkShippedInput,
  outputSchema: bulkMarkShippedOutput,
  auth: 'seller',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) =>
    orders.markShipped(
      principal,
      input.order_ids,
      {
        tracking_number: input.tracking_number,
        tracking_url: input.tracking_url,
        carrier_name: input.carrier_name,
      },
      TOOL_CORRELATION,
    ),
});

export const bulkExportOrdersTool = (
  orders: OrderOperations,
): Tool<typeof bulkExportOrdersInput, z.infer<typeof bulkExportOutput>> => ({
  name: 'bulk_export_orders',
  examples: [{ order_ids: [41, 42] }],
  description:
    "The seller's orders among up to 200 ids as CSV (Order ID, Product, Buyer, Quantity, Total in cents, Status, " +
    "Date placed), safe to open in a spreadsheet; ids that are not the seller's orders are listed, not exported.",
  inputSchema: bulkExportOrdersInput,
  outputSchema: bulkExportOutput,
  auth: 'seller',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) => orders.exportCsv(principal, input.order_ids),
});

export const sellerInboxSummariseTool = (
  orders: OrderOperations,
): Tool<typeof sellerInboxSummariseInput, z.infer<typeof inboxOutput>> => ({
  name: 'seller_inbox_summarise',
  examples: [{ window_hours: 24, limit: 10 }],
  description:
    'A read-only digest for the seller: orders placed and quote requests still pending that arrived in the last ' +
    'window_hours, open ' +
    'orders whose ship-by deadline falls within window_hours (overdue ones first), and orders with a reported ' +
    'issue; at most `limit` of each, with totals.',
  inputSchema: sellerInboxSummariseInput,
  outputSchema: inboxOutput,
  auth: 'seller',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) => orders.inboxSummary(principal, input.window_hours, input.limit),
});

/** The buyer and seller order tools: those of docs/specification.md, "MCP tools" in its order, then the order lifecycle's. */
export const orderTools = (orders: OrderOperations): Tool[] => [
  quickBuyTool(orders),
  getOrderStatusTool(orders),
  openDisputeTool(orders),
  bulkMarkShippedTool(orders),
  bulkExportOrdersTool(orders),
  sellerInboxSummariseTool(orders),
  listMyOrdersTool(orders),
  confirmOrderTool(orders),
  cancelOrderTool(orders),
  getSellerOrdersTool(orders),
  sellerCancelOrderTool(orders),
];
