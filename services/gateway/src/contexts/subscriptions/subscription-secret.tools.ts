import { randomUUID } from 'node:crypto';
import type { RotatedSecret } from './subscription.schema.js';
import { rotatedSecretSchema, rotateWebhookSecretToolInputSchema } from './subscription.schema.js';
import type { SubscriptionCommands } from './subscription.commands.js';
import type { Tool } from '../../edge/mcp/tool.js';

/** POST /api/subscriptions/{id}/rotate-secret as a tool (docs/security.md, API2). */
export const rotateWebhookSecretTool = (
  subscriptions: SubscriptionCommands,
): Tool<typeof rotateWebhookSecretToolInputSchema, RotatedSecret> => ({
  name: 'rotate_webhook_secret',
  examples: [{ subscription_id: 'sub_0123456789abcdef01234567' }],
  description:
    'Issue a new webhook signing secret (whsec_…) for a saved search, shown once. The owner calls it with its ' +
    'API key or agent token; an anonymous subscription with current_secret, the secret it holds. For 24 hours ' +
    'deliveries carry two v1= signatures in X-Marketplace-Signature (new and previous secret), then the new only.',
  inputSchema: rotateWebhookSecretToolInputSchema,
  outputSchema: rotatedSecretSchema,
  auth: 'none',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async (principal, input) =>
    subscriptions.rotateSecret(principal, input.subscription_id, input.current_secret, randomUUID()),
});
