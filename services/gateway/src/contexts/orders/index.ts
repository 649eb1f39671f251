import type { ContextSurface, EdgeServices } from '../../edge/context.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { adminDisputesRoutes } from './admin-disputes.routes.js';
import { checkoutConfirmationRouteDocs, checkoutConfirmationRoutes } from './checkout-confirmation.routes.js';
import { checkoutConfirmationTools } from './checkout-confirmation.tools.js';
import { CheckoutConfirmations } from './checkout-confirmations.js';
import { checkoutRouteDocs, checkoutRoutes } from './checkout.routes.js';
import type { OrderClient } from './order.client.js';
import type { PendingQuotesOf } from './order.operations.js';
import { OrderOperations } from './order.operations.js';
import { orderTools } from './order.tools.js';
import { acceptQuoteAndPayTool } from './quote-purchase.tools.js';
import { quotePurchaseRouteDocs, quotePurchaseRoutes } from './quote-purchase.routes.js';
import type { AgreedQuotes } from './quote-purchases.js';
import { QuotePurchases } from './quote-purchases.js';
import { ordersRouteDocs, ordersRoutes } from './orders.routes.js';
import { ucpCheckoutRouteDocs, ucpCheckoutRoutes } from './ucp-checkout.routes.js';
import { ucpCheckoutTools } from './ucp-checkout.tools.js';
import { acpCheckoutRouteDocs, acpCheckoutRoutes } from './acp-checkout.routes.js';
import { sellerOrdersRouteDocs, sellerOrdersRoutes } from './seller-orders.routes.js';

/** The dispute desk of the operator API is left out of /openapi.json on purpose, as the rest of it. */
export const routeDocs: readonly RouteDoc[] = [
  ...checkoutRouteDocs,
  ...ucpCheckoutRouteDocs,
  ...acpCheckoutRouteDocs,
  ...checkoutConfirmationRouteDocs,
  ...ordersRouteDocs,
  ...sellerOrdersRouteDocs,
  ...quotePurchaseRouteDocs,
];

export interface OrdersPorts {
  /** The seller's pending quote requests, for the inbox digest (the quote service's, wired by app.ts). */
  readonly pendingQuotes: PendingQuotesOf;
  /** The buyer's agreed quotes, which accept-and-pay turns into orders (the quotes context's QuoteRequests). */
  readonly agreedQuotes: AgreedQuotes;
  /** Signs checkout confirmation tokens (every replica needs the same). */
  readonly confirmationKey: Buffer;
}

/**
 * Checkout, orders and fulfilment, the buyer's confirmation step, the purchase of an agreed quote and the dispute
 * desk, over the order service.
 */
export const ordersContext = (
  edge: EdgeServices,
  client: OrderClient,
  ports: OrdersPorts,
): ContextSurface & { readonly operations: OrderOperations } => {
  const { problems, identity, bodyLimitBytes, adminToken, publicBaseUrl, logger } = edge;
  const operations = new OrderOperations(client, ports.pendingQuotes);
  const confirmations = new CheckoutConfirmations(operations, identity, ports.confirmationKey);
  const purchases = new QuotePurchases(ports.agreedQuotes, operations);
  return {
    operations,
    routes: [
      checkoutRoutes(problems, operations, identity, bodyLimitBytes),
      ucpCheckoutRoutes(problems, operations, identity, bodyLimitBytes, publicBaseUrl),
      acpCheckoutRoutes(
        problems,
        operations,
        ports.agreedQuotes,
        identity,
        bodyLimitBytes,
        publicBaseUrl,
        logger,
      ),
      checkoutConfirmationRoutes(problems, confirmations, identity, bodyLimitBytes),
      ordersRoutes(problems, operations, identity, bodyLimitBytes),
      sellerOrdersRoutes(problems, operations, identity, bodyLimitBytes),
      quotePurchaseRoutes(problems, purchases, identity),
      ...(adminToken === undefined
        ? []
        : [adminDisputesRoutes(problems, operations, adminToken, bodyLimitBytes)]),
    ],
    tools: [
      ...orderTools(operations),
      acceptQuoteAndPayTool(purchases),
      ...checkoutConfirmationTools(confirmations),
      ...ucpCheckoutTools(operations, publicBaseUrl),
    ],
  };
};
