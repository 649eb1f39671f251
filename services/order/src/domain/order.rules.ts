const HOUR_MS = 60 * 60 * 1_000;

/** docs/specification.md, "Checkout and orders": ship within 3 days of the order, inspect within 48 h of delivery. */
export const ORDER_DEADLINES = { shipWithinMs: 72 * HOUR_MS, inspectWithinMs: 48 * HOUR_MS } as const;

/** docs/specification.md, "Limits": dispute description and photos; docs/specification.md, "MCP tools" and 8: tracking fields. */
export const ORDER_LIMITS = {
  disputeDescriptionMaxLength: 2_000,
  disputePhotoUrlsMax: 10,
  trackingNumberMaxLength: 255,
  trackingUrlMaxLength: 2_000,
  carrierNameMaxLength: 255,
  bulkMaxOrderIds: 200,
} as const;

export const PAYMENT_TERMS = 'net_30' as const;

/** Characters as the specification counts them: code points, so an emoji is one character. */
export const characterCount = (text: string): number => [...text].length;

export const streamIdOfOrder = (orderId: number): string => `order_${orderId}`;
