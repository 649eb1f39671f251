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

const money = (cents: number, currency: string): string =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(cents / 100);

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
  const lines = [
    `Hello${quote.buyer.name === undefined ? '' : ` ${quote.buyer.name}`},`,
    '',
    `The seller ${outcome} your quote request ${quote.quoteRequestId} for ${quote.quantity} × ` +
      `"${product.name}" (${product.productId}).`,
    ...(agreed.length > 0 ? ['', ...agreed] : []),
    ...(response.message === undefined ? [] : ['', `Seller's message: ${response.message}`]),
  ];
  return {
    subject: `Your quote request ${quote.quoteRequestId} was ${outcome}`,
    ...render(lines),
    messageId: `<quote-request.${quote.quoteRequestId}.responded@${input.messageDomain}>`,
  };
};
