import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

/** What `initialize` answers on every MCP transport. */
export const MCP_SERVER_INFO = {
  name: 'liquidation-marketplace',
  title: 'Liquidation Marketplace',
  version: '1.0.0',
} as const;

/**
 * What a stateless `initialize` answers (/api/mcp/streamable, and POST /mcp without a session): no stream to
 * carry `notifications/resources/updated`, so no resource subscriptions.
 */
export const MCP_CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
  prompts: { listChanged: false },
  completions: {},
  logging: {},
} as const;

/**
 * What `initialize` answers when it opens a session on POST /mcp (an authenticated caller): saved-search resources
 * can be subscribed to, their updates arriving on the session's GET stream (docs/agents.md, "MCP resource
 * subscriptions").
 */
export const MCP_SESSION_CAPABILITIES = {
  ...MCP_CAPABILITIES,
  resources: { subscribe: true, listChanged: false },
} as const;

export const MCP_INSTRUCTIONS =
  'B2B marketplace for surplus, overstock and returned lots. Start with search_inventory (or ' +
  "search_inventory_semantic for plain-language needs), then get_product_details. Quantities above a lot's " +
  'stock or the bulk threshold go through request_quote; quick_buy only works for instant-checkout lots under ' +
  "the threshold. Seller tools need the seller's X-MCP-API-Key header; get_order_status and open_dispute need " +
  "the buying account's X-MCP-API-Key or an X-Agent-Token. Prices are integer cents.";

/** The protocol revisions the official SDK speaks (2025-11-25 first); `initialize` picks one of them. */
export const MCP_PROTOCOL_VERSIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;

/** The client's version when we speak it, else our latest (the client then decides whether to go on). */
export const negotiatedProtocolVersion = (requested: unknown): string =>
  typeof requested === 'string' && MCP_PROTOCOL_VERSIONS.includes(requested)
    ? requested
    : LATEST_PROTOCOL_VERSION;
