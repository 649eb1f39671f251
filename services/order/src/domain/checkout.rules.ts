import type { FieldViolation } from '@marketplace/platform';
import { validationError } from '@marketplace/platform';
import type { CheckoutLine } from './checkout.events.js';

/**
 * One product over either bound in one checkout goes through a quote (docs/specification.md, "Checkout").
 * Configurable.
 */
export interface BulkThreshold {
  readonly moreThanUnits: number;
  readonly moreThanSubtotalCents: number;
}

export const CHECKOUT_LIMITS = { maxLines: 50, maxQuantity: 1_000_000 } as const;

/**
 * A lot's freight terms as the listing service carries them (docs/specification.md, "Checkout and orders":
 * freight). Absent terms charge no freight.
 */
export type FreightTerms =
  | { readonly mode: 'included' }
  | { readonly mode: 'flat_per_order'; readonly cents: number }
  | { readonly mode: 'per_unit'; readonly cents: number }
  | { readonly mode: 'buyer_pickup'; readonly shipFromRegion: string }
  | { readonly mode: 'quoted_on_request' };

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
  readonly freight?: FreightTerms | undefined;
}

/** An accepted or countered quote of the buyer, at its agreed price. */
export interface AgreedQuote {
  readonly quoteRequestId: number;
  readonly productId: string;
  readonly quantity: number;
  readonly unitPriceCents: number;
  /** The agreed price can be bought until then. */
  readonly offerExpiresAt?: number | undefined;
  /**
   * The freight terms the buyer saw when asking, which the quote recorded (docs/specification.md, "Quotes"):
   * null when the seller had set none; absent on quotes recorded before they carried terms (the listing's apply).
   */
  readonly freight?: FreightTerms | null | undefined;
}

export interface LineToPrice {
  readonly listing: ListingForCheckout;
  readonly quantity: number;
  readonly quote?: AgreedQuote | undefined;
}

export interface PricedCheckout {
  readonly lines: CheckoutLine[];
  /** Goods only: the lines' totals. */
  readonly subtotalCents: number;
  /** Freight of every line, apart from the goods. */
  readonly freightCents: number;
  /** Goods and freight. */
  readonly totalCents: number;
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

/** The lines of one product in a checkout, added up (docs/specification.md, "Checkout and orders"). */
interface ProductTotals {
  readonly listing: ListingForCheckout;
  /** Per-unit freight of its lines, each by its own terms (a quoted line's: those its quote recorded). */
  perUnitCents: number;
  /** The flat freight charged once for the product: the listing's when a line is unquoted, else a quote's. */
  flatCents: number | undefined;
  /** 1-based line numbers, for the messages. */
  readonly lineNumbers: number[];
  units: number;
  /** Units and cents of the lines without an agreed quote: only those count against the bulk threshold. */
  unquotedUnits: number;
  unquotedCents: number;
}

const productTotalsOf = (toPrice: readonly LineToPrice[], lines: readonly CheckoutLine[]) => {
  const totals = new Map<string, ProductTotals>();
  toPrice.forEach(({ listing, quote }, index) => {
    const line = lines[index];
    if (line === undefined) return;
    const entry = totals.get(listing.productId) ?? {
      listing,
      perUnitCents: 0,
      flatCents: undefined,
      lineNumbers: [],
      units: 0,
      unquotedUnits: 0,
      unquotedCents: 0,
    };
    entry.lineNumbers.push(index + 1);
    entry.units += line.quantity;
    if (quote === undefined) {
      entry.unquotedUnits += line.quantity;
      entry.unquotedCents += line.lineTotalCents;
    }
    // A quote was agreed under the terms its buyer saw: a later change of the listing's does not apply to it.
    // Unrecorded (older quotes): the listing's. Recorded as none: no freight.
    const terms = quote === undefined || quote.freight === undefined ? listing.freight : quote.freight;
    if (terms?.mode === 'per_unit') entry.perUnitCents += terms.cents * line.quantity;
    if (terms?.mode === 'flat_per_order' && (quote === undefined || entry.flatCents === undefined)) {
      entry.flatCents = terms.cents;
    }
    totals.set(listing.productId, entry);
  });
  return [...totals.values()];
};

/**
 * The freight of a product's lines, on the first of them: flat_per_order once per product (one order per
 * product, however many lines), per_unit on every unit; included, buyer_pickup and absent terms charge none.
 * Each line is priced by its own terms: an unquoted line by the listing's, a quoted one by those its quote
 * recorded, so quoting one line never changes what the others pay. The one flat charge is the listing's when
 * any line is unquoted, else the first quoted line's.
 * quoted_on_request is not priced here: unquoted lines escalate, a quote's price carries the freight.
 */
const freightOfProduct = ({ perUnitCents, flatCents }: ProductTotals): number =>
  perUnitCents + (flatCents ?? 0);

const whereOf = ({ listing, lineNumbers }: ProductTotals): string =>
  `${lineNumbers.length === 1 ? 'line' : 'lines'} ${lineNumbers.join(', ')} (${listing.productId})`;

/**
 * Prices each line at the listing's price (or the quote's agreed price) and says what must go through a quote.
 * The bulk threshold and the stock apply per product, the lines of one product added up, so splitting a lot
 * into several lines changes nothing (docs/specification.md, "Checkout"). A line with an agreed quote is exempt
 * from the threshold (its quote is the negotiated price, used once) but not from the stock. A line below the
 * listing's minimum order quantity is a validation error: no quote changes that.
 */
export const priceCheckout = (threshold: BulkThreshold, toPrice: readonly LineToPrice[]): PricedCheckout => {
  const violations: FieldViolation[] = [];
  const currencies = new Set(toPrice.map(({ listing }) => listing.currency));
  if (currencies.size > 1) {
    throw validationError('every line of a checkout must be in one currency', [
      { path: 'line_items', message: `mixes currencies ${[...currencies].join(', ')}` },
    ]);
  }
  const lines = toPrice.map(({ listing, quantity, quote }, index): CheckoutLine => {
    const unitPriceCents = quote?.unitPriceCents ?? listing.priceCents;
    if (quote === undefined && quantity < listing.minOrderQuantity) {
      violations.push({
        path: `line_items/${index}/quantity`,
        message: `must be at least the listing's minimum order quantity of ${listing.minOrderQuantity}`,
      });
    }
    return {
      productId: listing.productId,
      productName: listing.name,
      sellerAccountId: listing.sellerAccountId,
      quantity,
      unitPriceCents,
      lineTotalCents: unitPriceCents * quantity,
      freightCents: 0,
      quoteRequestId: quote?.quoteRequestId,
    };
  });
  if (violations.length > 0) throw validationError('invalid checkout', violations);
  const escalations: string[] = [];
  const products = productTotalsOf(toPrice, lines);
  for (const product of products) {
    const first = (product.lineNumbers[0] ?? 1) - 1;
    const line = lines[first];
    const freightCents = freightOfProduct(product);
    if (line !== undefined && freightCents > 0) lines[first] = { ...line, freightCents };
  }
  for (const product of products) {
    const where = whereOf(product);
    // An agreed quote of such a lot was priced for its destination, freight in.
    if (product.listing.freight?.mode === 'quoted_on_request' && product.unquotedUnits > 0) {
      escalations.push(
        `${where}: the seller quotes freight on request; ask for a price with freight with request_quote, ` +
          'giving the shipping destination.',
      );
    }
    if (
      product.unquotedUnits > 0 &&
      isOverBulkThreshold(threshold, product.unquotedUnits, product.unquotedCents)
    ) {
      escalations.push(
        `${where}: ${product.unquotedUnits} units for ${dollars(product.unquotedCents)} is over the bulk ` +
          `threshold (more than ${threshold.moreThanUnits} units or ${dollars(threshold.moreThanSubtotalCents)} ` +
          'of one product in one checkout); ask the seller for a price with request_quote.',
      );
    }
    if (product.units > product.listing.quantity) {
      escalations.push(
        `${where}: only ${product.listing.quantity} units are in stock; ask the seller about ${product.units} ` +
          'with request_quote.',
      );
    }
  }
  const subtotalCents = lines.reduce((sum, line) => sum + line.lineTotalCents, 0);
  const freightCents = lines.reduce((sum, line) => sum + (line.freightCents ?? 0), 0);
  return {
    lines,
    subtotalCents,
    freightCents,
    totalCents: subtotalCents + freightCents,
    currency: toPrice[0]?.listing.currency ?? 'USD',
    escalations,
  };
};
