import { escapeHtml } from '@marketplace/platform';
import { QUOTE_LIMITS } from '@marketplace/vocabulary';
import type { QuoteRequest } from './quote.events.js';

/** What a quote email says; pure, so its wording is tested without a mail server. */
export interface QuoteEmail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** Stable per request and step: a repeat after a crash is recognisably the same message. */
  readonly messageId: string;
}

/** One formatter per currency, built once: constructing an `Intl.NumberFormat` costs far more than formatting. */
const currencyFormats = new Map<string, Intl.NumberFormat>();

const money = (cents: number, currency: string): string => {
  let format = currencyFormats.get(currency);
  if (format === undefined) {
    format = new Intl.NumberFormat('en-US', { style: 'currency', currency });
    currencyFormats.set(currency, format);
  }
  return format.format(cents / 100);
};

/** Plain lines become the text body, and escaped paragraphs the HTML body: one wording, two renditions. */
const render = (lines: readonly string[]): { text: string; html: string } => ({
  text: lines.join('\n'),
  html: lines
    .filter((line) => line !== '')
    .map((line) => `<p>${escapeHtml(line)}</p>`)
    .join('\n'),
});

const buyerLine = ({ buyer }: QuoteRequest): string =>
  [buyer.name, buyer.company && `(${buyer.company})`, `<${buyer.email}>`].filter(Boolean).join(' ');

/** To the seller, for a new request. */
export const newQuoteRequestEmail = (input: {
  readonly quoteRequest: QuoteRequest;
  readonly sellerName: string;
  readonly messageDomain: string;
}): QuoteEmail => {
  const { quoteRequest: quote, sellerName } = input;
  const { product } = quote;
  const lines = [
    `Hello ${sellerName},`,
    '',
    `A buyer asks for a quote on "${product.name}" (${product.productId}): quote request ${quote.quoteRequestId}.`,
    '',
    `Quantity: ${quote.quantity}` +
      (quote.exceedsAvailableStock ? ` (more than the ${product.availableQuantity} units listed)` : ''),
    `Listed price: ${money(product.unitPriceCents, product.currency)} per unit`,
    quote.targetPriceCents === undefined
      ? 'Target price: none given'
      : `Target price: ${money(quote.targetPriceCents, product.currency)} per unit`,
    `Buyer: ${buyerLine(quote)}`,
    ...(quote.shippingDestination === undefined ? [] : [`Ship to: ${quote.shippingDestination}`]),
    ...(quote.message === undefined ? [] : ['', `Message: ${quote.message}`]),
    '',
    `Buyers expect an answer within ${QUOTE_LIMITS.expectedResponse}. Answer with the respond_to_quote tool ` +
      `(quote_request_id ${quote.quoteRequestId}; accept, counter with counter_price, or decline); ` +
      'get_quote_requests lists every pending request.',
  ];
  return {
    subject: `Quote request ${quote.quoteRequestId}: ${quote.quantity} × ${product.name}`,
    ...render(lines),
    messageId: `<quote-request.${quote.quoteRequestId}.requested@${input.messageDomain}>`,
  };
};

const OUTCOMES = { accept: 'accepted', counter: 'countered', decline: 'declined' } as const;

/** To the buyer, once the seller answered. */
export const quoteResponseEmail = (input: {
  readonly quoteRequest: QuoteRequest;
  readonly messageDomain: string;
  /** The claim token of a request made without an account: whoever holds this email may claim it. */
  readonly claimToken?: string | undefined;
}): QuoteEmail => {
  const { quoteRequest: quote } = input;
  const { response, product } = quote;
  if (response === undefined) throw new Error(`quote request ${quote.quoteRequestId} has no response`);
  const outcome = OUTCOMES[response.action];
  const agreed =
    quote.agreedUnitPriceCents === undefined
      ? []
      : [
          `Agreed price: ${money(quote.agreedUnitPriceCents, product.currency)} per unit, ` +
            `${money(quote.agreedUnitPriceCents * quote.quantity, product.currency)} for ${quote.quantity} units.`,
          `Check out at this price with quote request ${quote.quoteRequestId}; the price is used once.`,
          ...(input.claimToken === undefined
            ? []
            : [
                'You asked without a buyer account: first claim the request for your account with its claim ' +
                  `token ${input.claimToken} (POST /api/ucp/quotes/${quote.quoteRequestId}/claim, or the ` +
                  'claim_quote tool). Keep the token private: it proves the request is yours.',
              ]),
        ];
  const steps = quote.history?.length ?? 1;
  const afterBuyerCounter = steps > 1;
  const answerLines =
    response.action === 'counter'
      ? [
          `The offer stands until ${offerExpiry(quote)}. Accept it, counter it or decline it with the ` +
            `respond_to_counter_offer tool (POST /api/ucp/quotes/${quote.quoteRequestId}/respond), or buy at ` +
            'this price directly.',
        ]
      : [];
  const lines = [
    `Hello${quote.buyer.name === undefined ? '' : ` ${quote.buyer.name}`},`,
    '',
    `The seller ${outcome} ${afterBuyerCounter ? 'your counter-offer on ' : ''}your quote request ` +
      `${quote.quoteRequestId} for ${quote.quantity} × "${product.name}" (${product.productId}).`,
    ...(agreed.length > 0 ? ['', ...agreed] : []),
    ...(answerLines.length > 0 ? ['', ...answerLines] : []),
    ...(response.message === undefined ? [] : ['', `Seller's message: ${response.message}`]),
  ];
  return {
    subject: `Your quote request ${quote.quoteRequestId} was ${outcome}`,
    ...render(lines),
    // The first answer keeps its historic id; later rounds are told apart by their step.
    messageId: afterBuyerCounter
      ? `<quote-request.${quote.quoteRequestId}.step-${steps}@${input.messageDomain}>`
      : `<quote-request.${quote.quoteRequestId}.responded@${input.messageDomain}>`,
  };
};

const offerExpiry = (quote: QuoteRequest): string =>
  quote.offerExpiresAt === undefined ? 'further notice' : new Date(quote.offerExpiresAt).toISOString();

/** To the seller, once the buyer answered a counter-offer. */
export const buyerAnswerEmail = (input: {
  readonly quoteRequest: QuoteRequest;
  readonly sellerName: string;
  readonly messageDomain: string;
}): QuoteEmail => {
  const { quoteRequest: quote } = input;
  const { product } = quote;
  const steps = quote.history ?? [];
  const step = steps.at(-1);
  if (step?.party !== 'buyer') throw new Error(`quote request ${quote.quoteRequestId} has no buyer answer`);
  const outcome = OUTCOMES[step.action];
  const price =
    step.priceCents === undefined ? '' : ` at ${money(step.priceCents, product.currency)} per unit`;
  const next =
    step.action === 'counter'
      ? [
          `The counter-offer stands until ${offerExpiry(quote)}. Accept, counter or decline it with ` +
            `respond_to_quote (quote_request_id ${quote.quoteRequestId}) or ` +
            `POST /api/seller/quotes/${quote.quoteRequestId}/respond.`,
        ]
      : step.action === 'accept'
        ? ['The buyer may now check out at this price until ' + `${offerExpiry(quote)}.`]
        : [];
  const lines = [
    `Hello ${input.sellerName},`,
    '',
    `The buyer ${outcome} your counter-offer on quote request ${quote.quoteRequestId} ` +
      `(${quote.quantity} × "${product.name}", ${product.productId})${price}.`,
    ...(next.length > 0 ? ['', ...next] : []),
    ...(step.message === undefined ? [] : ['', `Buyer's message: ${step.message}`]),
  ];
  return {
    subject: `Quote request ${quote.quoteRequestId}: the buyer ${outcome} your counter-offer`,
    ...render(lines),
    messageId: `<quote-request.${quote.quoteRequestId}.step-${steps.length}@${input.messageDomain}>`,
  };
};
