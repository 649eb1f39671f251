import type { ContextSurface, EdgeServices } from '../../edge/context.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { SellerWebhooks } from './seller-webhooks.js';
import { sellerWebhooksRouteDocs, sellerWebhooksRoutes } from './seller-webhooks.routes.js';
import type { SubscriptionClient } from './subscription.client.js';
import { SubscriptionCommands } from './subscription.commands.js';
import { rotateWebhookSecretTool } from './subscription-secret.tools.js';
import { subscribeToQueryTool } from './subscription.tools.js';
import { subscriptionsRouteDocs, subscriptionsRoutes } from './subscriptions.routes.js';
import { emailConfirmationRouteDocs, emailConfirmationRoutes } from './email-confirmation.routes.js';

export const routeDocs: readonly RouteDoc[] = [
  ...subscriptionsRouteDocs,
  ...emailConfirmationRouteDocs,
  ...sellerWebhooksRouteDocs,
];

export interface SubscriptionsContext extends ContextSurface {
  readonly commands: SubscriptionCommands;
}

/** Saved searches and sellers' webhooks over the subscription service. */
export const subscriptionsContext = (
  edge: EdgeServices,
  client: SubscriptionClient,
): SubscriptionsContext => {
  const { problems, identity, bodyLimitBytes, rateLimiter } = edge;
  const commands = new SubscriptionCommands(client, edge.publicBaseUrl);
  return {
    commands,
    routes: [
      subscriptionsRoutes(problems, commands, identity, bodyLimitBytes, rateLimiter),
      emailConfirmationRoutes(problems, commands),
      sellerWebhooksRoutes(problems, new SellerWebhooks(client), identity, bodyLimitBytes),
    ],
    tools: [subscribeToQueryTool(commands, rateLimiter), rotateWebhookSecretTool(commands)],
  };
};
