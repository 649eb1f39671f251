import { randomUUID } from 'node:crypto';
import type { SubscribeOutput } from './subscription.schema.js';
import { subscribeInputSchema, subscribeOutputSchema } from './subscription.schema.js';
import type { RateLimiter } from '../../edge/http/rate-limit.js';
import { currentClientAddress } from '../../edge/http/rate-limit.js';
import type { SubscriptionCommands } from './subscription.commands.js';
import { channelEmailsOf } from './subscription.commands.js';
import type { Tool } from '../../edge/mcp/tool.js';

/** Typical arguments of subscribe_to_query; /openapi.json reuses them where a route takes the same fields. */
export const SUBSCRIBE_TO_QUERY_EXAMPLES = [
  {
    query: { category: 'electronics', maxPrice: 5000, minQuantity: 100 },
    channels: [{ type: 'mcp_resource' }],
  },
];

/**
 * subscribe_to_query (docs/specification.md, "MCP tools"): a saved search keyed to the caller; anonymous callers may use webhook and
 * email channels. Each new promoted listing that matches is delivered once to every channel.
 */
export const subscribeToQueryTool = (
  subscriptions: SubscriptionCommands,
  limiter: RateLimiter,
): Tool<typeof subscribeInputSchema, SubscribeOutput> => ({
  name: 'subscribe_to_query',
  examples: SUBSCRIBE_TO_QUERY_EXAMPLES,
  description:
    'Save a marketplace search and get notified when a new public listing matches it: a signed webhook POST ' +
    '(saved_search.match, HMAC-SHA256 in X-Marketplace-Signature under the webhook_secret returned once here), ' +
    'an email (once the address is confirmed: a new address gets one confirmation email, and its channel shows ' +
    'status pending_confirmation until then), or the pollable resource ' +
    'marketplace://subscriptions/{id} (last 100 matches; needs an API key or agent token). Prices are cents per unit. ' +
    'Each destination once per search; rate-limited per caller and per mailbox.',
  inputSchema: subscribeInputSchema,
  outputSchema: subscribeOutputSchema,
  auth: 'none',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (principal, input) => {
    // The limits of POST /api/subscriptions, on every transport (a refusal is an isError result).
    await limiter.enforce(
      limiter.subscriptionChecks(principal, currentClientAddress(), channelEmailsOf(input)),
    );
    return subscriptions.subscribe(principal, input, randomUUID());
  },
});
