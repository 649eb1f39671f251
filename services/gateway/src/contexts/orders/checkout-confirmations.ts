import { randomBytes } from 'node:crypto';
import { AppError, conflict, forbidden, validationError } from '@marketplace/platform';
import type { Principal } from '../../edge/account.js';
import type { ConfirmationClaims, PricedContent } from './domain/confirmation-token.js';
import {
  CONFIRMATION_TTL_MS,
  changesBetween,
  digestOf,
  signConfirmation,
  verifyConfirmation,
} from './domain/confirmation-token.js';
import type { CheckoutBody, CheckoutSessionView } from './checkout.schema.js';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import type { OrderOperations } from './order.operations.js';
import { requireBuyer } from './order.operations.js';

export interface PreviewInput {
  readonly line_items: CheckoutBody['line_items'];
  readonly shipping_country?: string | undefined;
}

const contentOf = (session: CheckoutSessionView): PricedContent => ({
  status: session.status,
  lines: session.line_items.map((line) => ({
    product_id: line.product_id,
    quantity: line.quantity,
    unit_price: line.unit_price,
    line_total: line.line_total,
    freight: line.freight,
    ...(line.quote_request_id === undefined ? {} : { quote_request_id: line.quote_request_id }),
  })),
  total: session.totals.total,
  currency: session.currency,
  shippingCountry: session.shipping_country,
});

const INVALID_TOKEN = 'is not a confirmation token of preview_checkout';

/**
 * preview_checkout and confirm_purchase (docs/specification.md, "Preview and confirm"). The preview prices the
 * lines as a checkout would and signs what it showed; the confirmation prices the same lines again, under an
 * idempotency key unique to the preview, and places the orders only when the content is exactly the previewed
 * one. A replay finds the session of the first confirmation completed and answers 409.
 */
export class CheckoutConfirmations {
  constructor(
    private readonly orders: OrderOperations,
    private readonly identity: Pick<IdentityService, 'contactOf'>,
    private readonly key: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  private async price(buyer: Principal, input: PreviewInput, correlationId: string, idempotencyKey?: string) {
    const contact = await this.identity.contactOf(buyer.accountId);
    return this.orders.createCheckout(
      buyer,
      {
        line_items: input.line_items,
        buyer: { email: contact.email, name: contact.name, company: contact.company },
        shipping_country: input.shipping_country,
      },
      correlationId,
      idempotencyKey,
    );
  }

  async preview(principal: Principal | undefined, input: PreviewInput, correlationId: string) {
    const buyer = requireBuyer(principal, 'preview a purchase');
    const session = await this.price(buyer, input, correlationId);
    const previewed = contentOf(session);
    const ready = session.status === 'ready_for_complete';
    const expiresAt = Math.min(this.now() + CONFIRMATION_TTL_MS, Date.parse(session.expires_at));
    const claims: ConfirmationClaims = {
      jti: `confirm-${randomBytes(16).toString('base64url')}`,
      accountId: buyer.accountId,
      expiresAt,
      previewed,
    };
    return {
      status: session.status,
      line_items: session.line_items.map((line) => ({
        ...line,
        price_source: line.quote_request_id === undefined ? ('listing' as const) : ('quote' as const),
      })),
      totals: {
        goods: session.totals.subtotal,
        freight: session.totals.freight,
        total: session.totals.total,
      },
      currency: session.currency,
      payment_terms: session.payment_terms,
      ...(session.shipping_country === undefined ? {} : { shipping_country: session.shipping_country }),
      escalations: session.messages,
      confirmation_token: ready ? signConfirmation(this.key, claims) : null,
      confirmation_expires_at: ready ? new Date(expiresAt).toISOString() : null,
      digest: digestOf(previewed),
    };
  }

  async confirm(principal: Principal | undefined, token: string, correlationId: string) {
    const buyer = requireBuyer(principal, 'confirm a purchase');
    const claims = verifyConfirmation(this.key, token);
    if (claims === undefined) {
      throw validationError(`confirmation_token ${INVALID_TOKEN}`, [
        { path: 'confirmation_token', message: INVALID_TOKEN },
      ]);
    }
    if (claims.accountId !== buyer.accountId) {
      throw forbidden('this confirmation token was issued to another account');
    }
    if (this.now() >= claims.expiresAt) {
      throw conflict(
        `the preview expired at ${new Date(claims.expiresAt).toISOString()}; call preview_checkout again`,
      );
    }
    const { previewed } = claims;
    const input: PreviewInput = {
      line_items: previewed.lines.map(({ product_id, quantity, quote_request_id }) => ({
        product_id,
        quantity,
        ...(quote_request_id === undefined ? {} : { quote_request_id }),
      })),
      shipping_country: previewed.shippingCountry,
    };
    let current: CheckoutSessionView;
    try {
      current = await this.price(buyer, input, correlationId, claims.jti);
    } catch (error) {
      // A line that no longer prices (a quote expired or used, a listing withdrawn) is a change, not bad input.
      if (error instanceof AppError && (error.kind === 'validation' || error.kind === 'conflict')) {
        throw conflict(`the checkout changed since the preview: ${error.message}; preview again`);
      }
      throw error;
    }
    if (current.status === 'completed' || current.status === 'completing') {
      throw conflict(
        `this confirmation token was already used (orders ${current.order_ids.join(', ') || 'being placed'}); ` +
          'a token places its order once',
      );
    }
    const content = contentOf(current);
    if (digestOf(content) !== digestOf(previewed)) {
      throw conflict(
        `the checkout changed since the preview (${changesBetween(previewed, content).join('; ')}); ` +
          'call preview_checkout again',
      );
    }
    return this.orders.completeCheckout(buyer, current.id, correlationId);
  }
}
