import type { AccountContact, Principal } from '../../edge/account.js';
import type { OrderOperations } from './order.operations.js';

/** What a purchase reads of the quotes context (its QuoteRequests, wired in by app.ts). */
export interface AgreedQuotes {
  /** The caller's own quote request: which product and quantity were quoted. */
  status(
    principal: Principal | undefined,
    request: { readonly quoteRequestId: number },
  ): Promise<{ readonly product_id: string; readonly quantity: number; readonly quote_request_id: number }>;
  /** The buyer's own contact details, which the order is placed under. */
  contactOf(principal: Principal | undefined): Promise<AccountContact>;
}

export interface QuotePurchaseInput {
  readonly quote_request_id: number;
  /** Default: the quoted quantity. */
  readonly quantity?: number | undefined;
  readonly shipping_country?: string | undefined;
  readonly idempotency_key?: string | undefined;
}

/**
 * accept_quote_and_pay and `POST /api/ucp/quotes/{id}/accept-and-pay`: the buyer's own agreed quote becomes an
 * order at once, at the agreed price (docs/specification.md, "Quotes"): the quote service says which product and
 * quantity (and refuses another account's request), the order service checks the price, its expiry and its single
 * use, and places the order under the account's own contact details.
 */
export class QuotePurchases {
  constructor(
    private readonly quotes: AgreedQuotes,
    private readonly orders: OrderOperations,
  ) {}

  async acceptAndPay(principal: Principal | undefined, input: QuotePurchaseInput, correlationId: string) {
    const quote = await this.quotes.status(principal, { quoteRequestId: input.quote_request_id });
    const buyer = await this.quotes.contactOf(principal);
    return this.orders.quickBuy(
      principal,
      {
        product_id: quote.product_id,
        quantity: input.quantity ?? quote.quantity,
        buyer_email: buyer.email,
        buyer_name: buyer.name,
        buyer_company: buyer.company,
        shipping_country: input.shipping_country,
        idempotency_key: input.idempotency_key,
        quote_request_id: quote.quote_request_id,
      },
      correlationId,
    );
  }
}
