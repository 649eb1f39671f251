import type { FieldViolation } from '@marketplace/platform';
import { validationError } from '@marketplace/platform';
import type { CheckoutLine } from './checkout.events.js';

/** Decisions "Checkout and orders": a line over either bound goes through a quote. Configurable. */
export interface BulkThreshold {
  readonly moreThanUnits: number;
  readonly moreThanSubtotalCents: number;
}

export const CHECKOUT_LIMITS = { maxLines: 50, maxQuantity: 1_000_000 } as const;

/** What checkout needs to know of a listing, read from the listing service (the source of truth). */
export interface ListingForCheckout {
  readonly productId: string;
  readonly name: string;
  readonly sellerAccountId: number;
  readonly priceCents: number;
  readonly currency: string;
  /** Units in stock now. */
  readonly quantity: number;
  readonly minOrderQuantity: number;
  readonly instantCheckout: boolean;
}

/** An accepted or countered quote of the buyer, at its agreed price. */
export interface AgreedQuote {
  readonly quoteRequestId: number;
  readonly productId: string;
  readonly quantity: number;
  readonly unitPriceCents: number;
}

export interface LineToPrice {
  readonly listing: ListingForCheckout;
  readonly quantity: number;
  readonly quote?: AgreedQuote | undefined;
}

export interface PricedCheckout {
  readonly lines: CheckoutLine[];
  readonly subtotalCents: number;
  readonly currency: string;
  /** Empty: the session can be completed; otherwise why it needs escalation. */
  readonly escalations: string[];
}

export const isOverBulkThreshold = (
  threshold: BulkThreshold,
  quantity: number,
  lineTotalCents: number,
): boolean => quantity > threshold.moreThanUnits || lineTotalCents > threshold.moreThanSubtotalCents;

const dollars = (cents: number): string =>
  `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`;

/**
 * Prices each line at the listing's price (or the quote's agreed price) and says which lines must go through a
 * quote: more than the bulk threshold (unless already quoted) or more units than in stock. A line below the
 * listing's minimum order quantity is a validation error: no quote changes that.
 */
export const priceCheckout = (threshold: BulkThreshold, toPrice: readonly LineToPrice[]): PricedCheckout => {
  const violations: FieldViolation[] = [];
  const escalations: string[] = [];
  const currencies = new Set(toPrice.map(({ listing }) => listing.currency));
  if (currencies.size > 1) {
    throw validationError('every line of a checkout must be in one currency', [
      { path: 'line_items', message: `mixes currencies ${[...currencies].join(', ')}` },
    ]);
  }
  const lines = toPrice.map(({ listing, quantity, quote }, index): CheckoutLine => {
    const unitPriceCents = quote?.unitPriceCents ?? listing.priceCents;
    const lineTotalCents = unitPriceCents * quantity;
    const where = `line ${index + 1} (${listing.productId})`;
    if (quote === undefined && quantity < listing.minOrderQuantity) {
      violations.push({
        path: `line_items/${index}/quantity`,
        message: `must be at least the listing's minimum order quantity of ${listing.minOrderQuantity}`,
      });
    }
    if (quote === undefined && isOverBulkThreshold(threshold, quantity, lineTotalCents)) {
      escalations.push(
        `${where}: ${quantity} units for ${dollars(lineTotalCents)} is over the bulk threshold (more than ` +
          `${threshold.moreThanUnits} units or ${dollars(threshold.moreThanSubtotalCents)}); ask the seller for a ` +
          'price with request_quote.',
      );
    }
    if (quantity > listing.quantity) {
      escalations.push(
        `${where}: only ${listing.quantity} units are in stock; ask the seller about ${quantity} with request_quote.`,
      );
    }
    return {
      productId: listing.productId,
      productName: listing.name,
      sellerAccountId: listing.sellerAccountId,
      quantity,
      unitPriceCents,
      lineTotalCents,
      quoteRequestId: quote?.quoteRequestId,
    };
  });
  if (violations.length > 0) throw validationError('invalid checkout', violations);
  return {
    lines,
    subtotalCents: lines.reduce((sum, line) => sum + line.lineTotalCents, 0),
    currency: toPrice[0]?.listing.currency ?? 'USD',
    escalations,
  };
};
