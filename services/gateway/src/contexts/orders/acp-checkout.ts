import { z } from 'zod';
import { DEFAULT_CURRENCY, validationError } from '@marketplace/platform';
import { RETURN_POLICY_PATH, TERMS_PATH } from '../../edge/discovery/policies.routes.js';
import type { Problem } from '../../edge/http/problem.js';
import { countryCodeSchema, productIdSchema, quantitySchema } from '../../edge/schemas/fields.schema.js';
import { WHOLE_INPUT } from '../../edge/schemas/validate.js';
import type { CheckoutBody, CheckoutSessionView } from './checkout.schema.js';
import {
  MAX_CHECKOUT_LINES,
  buyerCompanySchema,
  buyerEmailSchema,
  buyerNameSchema,
} from './checkout.schema.js';
import type { OrderView } from './order.schema.js';

/**
 * ACP's Agentic Checkout API (release 2026-04-17; docs/protocols.md §3.2) as a translation of the
 * order service's checkout sessions, as ucp-checkout.ts is for UCP: prices, the bulk threshold and its escalation
 * to a quote, freight, expiry and stock are the order service's; this file only renames.
 */
export const ACP_CHECKOUT_VERSION = '2026-04-17';
/** The API-Version values the checkout answers, newest first (ACP's `supported_versions`). */
export const ACP_SUPPORTED_VERSIONS: readonly string[] = [ACP_CHECKOUT_VERSION];
/** ACP amounts and currencies are lower-case ISO 4217 (docs/protocols.md §3.3, `supported_currencies`). */
const CURRENCY = DEFAULT_CURRENCY.toLowerCase();

/** The one payment handler: invoice terms, net 30, decided by the order service (docs/agents.md, "ACP"). */
export const ACP_INVOICE_HANDLER_ID = 'invoice_net_30';
export const ACP_PAYMENT_TERMS = 'net_30';

/** `7` or `quote_7`: one of the buyer's quote requests, as the quote API numbers them. */
const quoteIdSchema = z
  .string({ error: 'must be a string' })
  .regex(/^(quote_)?[1-9][0-9]{0,15}$/, { message: 'must be a quote request id, e.g. 7', abort: true })
  .transform((id) => Number(id.replace('quote_', '')))
  .refine(Number.isSafeInteger, `must number at most ${Number.MAX_SAFE_INTEGER}`);

const lineItemsSchema = z
  .array(
    z.looseObject(
      {
        id: productIdSchema.describe('the product id: a lot has one variant'),
        quantity: quantitySchema
          .optional()
          .describe('units; default the quoted quantity on the line of quote_id, else 1'),
      },
      { error: 'must be an object with the item id' },
    ),
    { error: 'must be an array of items' },
  )
  .min(1, 'must have at least 1 item')
  .max(MAX_CHECKOUT_LINES, `must have at most ${MAX_CHECKOUT_LINES} items`);

const buyerSchema = z.looseObject(
  {
    email: buyerEmailSchema,
    first_name: buyerNameSchema.optional(),
    last_name: buyerNameSchema.optional(),
    full_name: buyerNameSchema.optional(),
    company: z.looseObject({ name: buyerCompanySchema }).optional(),
  },
  { error: 'must be an object with the buyer email' },
);

/** Only the country is read: freight is priced per country, and orders keep the country (docs/agents.md). */
const fulfillmentDetailsSchema = z.looseObject(
  {
    address: z
      .looseObject({ country: countryCodeSchema }, { error: 'must be an object with the country' })
      .optional(),
  },
  { error: 'must be an object' },
);

const capabilitiesSchema = z.looseObject({}, { error: 'must be an object' });

/**
 * The create request (docs/protocols.md §3.2: `line_items`, `currency` and `capabilities`, of which `capabilities` is
 * taken as sent and not required). Unknown members are ignored, as ACP asks of a seller (forward compatibility).
 */
export const acpCreateSchema = z.looseObject(
  {
    line_items: lineItemsSchema,
    currency: z
      .string({ error: 'must be a string' })
      .refine(
        (currency) => currency.toLowerCase() === CURRENCY,
        `must be ${CURRENCY}: lots are priced in it`,
      ),
    capabilities: capabilitiesSchema.optional(),
    buyer: buyerSchema.optional(),
    fulfillment_details: fulfillmentDetailsSchema.optional(),
    quote_id: quoteIdSchema
      .optional()
      .describe('an accepted or countered quote of the buyer: its line is priced at the agreed unit price'),
  },
  { error: 'must be a JSON object' },
);
export type AcpCreate = z.infer<typeof acpCreateSchema>;

/** The update request: each member replaces the session's, the rest stays (docs/protocols.md §3.2, "Update"). */
export const acpUpdateSchema = z.looseObject(
  {
    line_items: lineItemsSchema.optional(),
    buyer: buyerSchema.optional(),
    fulfillment_details: fulfillmentDetailsSchema.optional(),
    selected_fulfillment_options: z
      .array(
        z.looseObject(
          {
            type: z.literal('shipping', { error: 'must be shipping: freight is the one option' }),
            option_id: z.literal('freight', { error: 'must be freight, the one fulfillment option' }),
          },
          { error: 'must be an object' },
        ),
        { error: 'must be an array' },
      )
      .max(MAX_CHECKOUT_LINES, `must have at most ${MAX_CHECKOUT_LINES} entries`)
      .optional(),
    quote_id: quoteIdSchema.optional(),
  },
  { error: 'must be a JSON object' },
);
export type AcpUpdate = z.infer<typeof acpUpdateSchema>;

/** The complete request: `payment_data` names our handler or invoice terms net 30, the one method we take. */
export const acpCompleteSchema = z.looseObject(
  {
    payment_data: z.looseObject(
      {
        handler_id: z
          .literal(ACP_INVOICE_HANDLER_ID, {
            error: `must be ${ACP_INVOICE_HANDLER_ID}: payment is on invoice terms, net 30`,
          })
          .optional(),
        payment_terms: z
          .literal(ACP_PAYMENT_TERMS, { error: `must be ${ACP_PAYMENT_TERMS}: the one payment term offered` })
          .optional(),
        purchase_order_number: z
          .string({ error: 'must be a string' })
          .max(100, 'must be at most 100 characters')
          .optional(),
      },
      { error: `must be an object, e.g. {"payment_terms": "${ACP_PAYMENT_TERMS}"}` },
    ),
  },
  { error: 'must be a JSON object' },
);

/** The cancel request: its body (an `intent_trace`) is optional and not recorded. */
export const acpCancelSchema = z.looseObject({}, { error: 'must be a JSON object' }).optional();

/** The line to price a quote at: the quote's product among the items, else a violation of `quote_id`. */
export interface QuotedLine {
  readonly quoteRequestId: number;
  readonly productId: string;
  readonly quantity: number;
}

const nameOf = (buyer: NonNullable<AcpCreate['buyer']>): string =>
  buyer.full_name ?? [buyer.first_name, buyer.last_name].filter(Boolean).join(' ');

const buyerOf = (buyer: NonNullable<AcpCreate['buyer']>): NonNullable<CheckoutBody['buyer']> => {
  const name = nameOf(buyer);
  return {
    email: buyer.email,
    ...(name === '' ? {} : { name }),
    ...(buyer.company === undefined ? {} : { company: buyer.company.name }),
  };
};

const linesOf = (
  items: NonNullable<AcpCreate['line_items']>,
  quote: QuotedLine | undefined,
): CheckoutBody['line_items'] => {
  const quotedIndex = quote === undefined ? -1 : items.findIndex((item) => item.id === quote.productId);
  if (quote !== undefined && quotedIndex < 0) {
    throw quoteNotInItems(quote);
  }
  return items.map((item, index) =>
    index === quotedIndex && quote !== undefined
      ? {
          product_id: item.id,
          quantity: item.quantity ?? quote.quantity,
          quote_request_id: quote.quoteRequestId,
        }
      : { product_id: item.id, quantity: item.quantity ?? 1 },
  );
};

/** A 400 naming `quote_id`. */
const invalidQuoteId = (message: string) =>
  validationError(`invalid checkout: quote_id ${message}`, [{ path: 'quote_id', message }]);

const quoteNotInItems = (quote: QuotedLine) =>
  invalidQuoteId(`is a quote for ${quote.productId}, which no line item names`);

/** The order service's checkout request for an ACP create request. */
export const checkoutBodyOfAcp = (
  request: AcpCreate,
  quote: QuotedLine | undefined,
  accountBuyer: NonNullable<CheckoutBody['buyer']> | undefined,
): CheckoutBody => {
  const buyer = request.buyer === undefined ? accountBuyer : buyerOf(request.buyer);
  const country = request.fulfillment_details?.address?.country;
  return {
    line_items: linesOf(request.line_items, quote),
    ...(buyer === undefined ? {} : { buyer }),
    ...(country === undefined ? {} : { shipping_country: country }),
  };
};

/** The changes of an ACP update request, each absent member kept by the order service. */
export const checkoutChangesOfAcp = (
  request: AcpUpdate,
  quote: QuotedLine | undefined,
): Partial<CheckoutBody> => {
  if (quote !== undefined && request.line_items === undefined) {
    throw invalidQuoteId('needs line_items naming the quoted product');
  }
  const country = request.fulfillment_details?.address?.country;
  return {
    ...(request.line_items === undefined ? {} : { line_items: linesOf(request.line_items, quote) }),
    ...(request.buyer === undefined ? {} : { buyer: buyerOf(request.buyer) }),
    ...(country === undefined ? {} : { shipping_country: country }),
  };
};

/**
 * docs/protocols.md §3.2, `status`: ready_for_complete is ACP's ready_for_payment (payment is the invoice, nothing to
 * collect), completing is complete_in_progress; an open session past its expiry is `expired`.
 */
const STATUS = {
  ready_for_complete: 'ready_for_payment',
  requires_escalation: 'requires_escalation',
  completing: 'complete_in_progress',
  completed: 'completed',
  canceled: 'canceled',
} as const satisfies Record<CheckoutSessionView['status'], string>;

type AcpTotalType = 'items_base_amount' | 'discount' | 'subtotal' | 'fulfillment' | 'tax' | 'total';
interface AcpTotal {
  readonly type: AcpTotalType;
  readonly display_text: string;
  readonly amount: number;
}

/**
 * Goods, discount, subtotal, freight, tax and total. Discount is 0: a quote's agreed price is the unit price
 * itself. Tax is 0 and says why: the marketplace collects none, the seller's invoice carries any tax due.
 */
const totalsOf = (goods: number, freight: number): AcpTotal[] => [
  { type: 'items_base_amount', display_text: 'Goods', amount: goods },
  { type: 'discount', display_text: 'Discount', amount: 0 },
  { type: 'subtotal', display_text: 'Subtotal', amount: goods },
  { type: 'fulfillment', display_text: 'Freight', amount: freight },
  { type: 'tax', display_text: 'Tax (invoiced by the seller, not collected here)', amount: 0 },
  { type: 'total', display_text: 'Total', amount: goods + freight },
];

/** The one payment handler, as ACP's `capabilities.payment.handlers[]` declares one (docs/protocols.md §3.2). */
export const acpInvoiceHandler = (publicBaseUrl: string) => ({
  id: ACP_INVOICE_HANDLER_ID,
  name: `${new URL(publicBaseUrl).hostname.split('.').reverse().join('.')}.invoice`,
  display_name: 'Invoice, net 30',
  version: ACP_CHECKOUT_VERSION,
  spec: `${publicBaseUrl}${TERMS_PATH}`,
  requires_delegate_payment: false,
  requires_pci_compliance: false,
  psp: 'none',
  config_schema: `${publicBaseUrl}/openapi.json`,
  instrument_schemas: [],
  config: { payment_terms: ACP_PAYMENT_TERMS },
});

const lineIdOf = (index: number) => `line_${index + 1}`;

/** The ACP CheckoutSession of an order-service session (docs/protocols.md §3.2, "CheckoutSession"). */
export const acpCheckoutView = (
  publicBaseUrl: string,
  session: CheckoutSessionView,
  orders: readonly OrderView[] = [],
  now = Date.now(),
) => {
  const open = session.status === 'ready_for_complete' || session.status === 'requires_escalation';
  const expired = open && Date.parse(session.expires_at) < now;
  const escalated = session.status === 'requires_escalation' && !expired;
  const escalatedIndex = Math.max(
    0,
    session.line_items.findIndex((line) => session.messages.some((text) => text.includes(line.product_id))),
  );
  const quoted = session.line_items.find((line) => line.quote_request_id !== undefined);
  const lineIds = session.line_items.map((_, index) => lineIdOf(index));
  return {
    id: session.id,
    protocol: { version: ACP_CHECKOUT_VERSION },
    capabilities: { payment: { handlers: [acpInvoiceHandler(publicBaseUrl)] } },
    status: expired ? ('expired' as const) : STATUS[session.status],
    currency: session.currency.toLowerCase(),
    line_items: session.line_items.map((line, index) => ({
      id: lineIds[index]!,
      item: { id: line.product_id, name: line.title, unit_amount: line.unit_price },
      quantity: line.quantity,
      name: line.title,
      unit_amount: line.unit_price,
      product_id: line.product_id,
      totals: totalsOf(line.line_total, line.freight),
    })),
    fulfillment_options: [
      {
        type: 'shipping' as const,
        id: 'freight',
        title: 'Freight',
        description:
          "The seller's freight terms for each lot, to the shipping country (fulfillment_details.address.country)",
        totals: [
          { type: 'fulfillment' as const, display_text: 'Freight', amount: session.totals.freight },
          { type: 'total' as const, display_text: 'Total', amount: session.totals.freight },
        ],
      },
    ],
    selected_fulfillment_options: [{ type: 'shipping' as const, option_id: 'freight', item_ids: lineIds }],
    totals: totalsOf(session.totals.subtotal, session.totals.freight),
    messages: expired
      ? [
          {
            type: 'error' as const,
            code: 'expired' as const,
            content_type: 'plain' as const,
            content: `the session expired at ${session.expires_at}; create a new checkout session`,
            resolution: 'recoverable' as const,
          },
        ]
      : messagesOf(session, escalated, escalatedIndex),
    links: [
      { type: 'terms_of_use' as const, url: `${publicBaseUrl}${TERMS_PATH}`, title: 'Terms of sale' },
      {
        type: 'return_policy' as const,
        url: `${publicBaseUrl}${RETURN_POLICY_PATH}`,
        title: 'Return policy',
      },
    ],
    expires_at: session.expires_at,
    ...(escalated
      ? {
          // The human step of an escalation is a quote request; the product's page says how to ask for one.
          continue_url: `${publicBaseUrl}/agents/products/${encodeURIComponent(session.line_items[escalatedIndex]?.product_id ?? '')}.md`,
        }
      : {}),
    ...(quoted?.quote_request_id === undefined ? {} : { quote_id: String(quoted.quote_request_id) }),
    ...(orders.length === 0
      ? {}
      : {
          // One order per line (services/order/README.md, "Completing"): `order` is the first, metadata lists all.
          order: {
            type: 'order' as const,
            id: String(orders[0]!.order_id),
            checkout_session_id: session.id,
            order_number: String(orders[0]!.order_id),
            permalink_url: `${publicBaseUrl}/api/orders/${orders[0]!.order_id}`,
            status: 'confirmed',
          },
        }),
    // ACP's fulfillment_details.address needs a whole address (name, street, city, state, postal code) and the
    // session keeps only the shipping country (docs/protocols.md §3.2): the country is answered here instead.
    ...(session.shipping_country === undefined && orders.length === 0
      ? {}
      : {
          metadata: {
            ...(session.shipping_country === undefined ? {} : { shipping_country: session.shipping_country }),
            ...(orders.length === 0
              ? {}
              : { order_ids: orders.map((order) => order.order_id), payment_terms: session.payment_terms }),
          },
        }),
  };
};
export type AcpCheckoutSession = ReturnType<typeof acpCheckoutView>;

const messagesOf = (session: CheckoutSessionView, escalated: boolean, escalatedIndex: number) =>
  session.messages.map((content) =>
    escalated
      ? {
          type: 'error' as const,
          // Over the bulk threshold or above stock: more than a checkout may buy, so a quote is the way.
          code: 'quantity_exceeded' as const,
          param: `$.line_items[${escalatedIndex}].quantity`,
          content_type: 'plain' as const,
          content,
          resolution: 'requires_buyer_input' as const,
        }
      : // Otherwise a message explains why the last completion failed (stock ran out): a new one may succeed.
        {
          type: 'error' as const,
          code: 'out_of_stock' as const,
          content_type: 'plain' as const,
          content,
          resolution: 'recoverable' as const,
        },
  );

/**
 * What our paths (`line_items/0/product_id`, from the gateway's schemas or the order service) are in an ACP
 * request, as RFC 9535 JSONPath (`$.line_items[0].id`).
 */
export const acpParamOf = (path: string): string | undefined => {
  if (path === WHOLE_INPUT || path === '') return undefined;
  const renamed = path
    .replace(/^line_items\/(\d+)\/product_id$/, 'line_items/$1/id')
    .replace(/^line_items\/\d+\/quote_request_id$/, 'quote_id')
    .replace(/^shipping_country$/, 'fulfillment_details/address/country')
    .replace(/^buyer\/name$/, 'buyer/full_name')
    .replace(/^buyer\/company$/, 'buyer/company/name');
  if (!/^[a-z_]/.test(renamed)) return undefined;
  return `$${renamed
    .split('/')
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('')}`;
};

/** ACP's protocol-level `Error` (docs/protocols.md §3.2), with the status it is sent with. */
export interface AcpError {
  readonly status: number;
  readonly body: {
    readonly type: 'invalid_request' | 'processing_error' | 'service_unavailable';
    readonly code: string;
    readonly message: string;
    readonly param?: string;
    readonly supported_versions?: readonly string[];
  };
}

/** Codes of the problems ACP names; the others are the problem slug in snake case. */
const CODE_OF_SLUG: Record<string, string> = {
  'validation-error': 'invalid',
  'malformed-json': 'invalid_json',
};

/** The ACP Error of one of our problem documents: same status, the first field as `param`. */
export const acpErrorOfProblem = (problem: Problem): AcpError => {
  const slug = problem.type.slice(problem.type.lastIndexOf('/') + 1);
  const param = problem.errors
    ?.map(({ path }) => acpParamOf(path))
    .find((candidate): candidate is string => candidate !== undefined);
  const fields = problem.errors
    ?.map(({ path, message }) => `${acpParamOf(path) ?? path} ${message}`)
    .join('; ');
  return {
    status: problem.status,
    body: {
      type:
        problem.status === 503
          ? 'service_unavailable'
          : problem.status >= 500
            ? 'processing_error'
            : 'invalid_request',
      code: problem.code ?? CODE_OF_SLUG[slug] ?? slug.replaceAll('-', '_'),
      message: fields === undefined || fields === '' ? (problem.detail ?? problem.title) : fields,
      ...(param === undefined ? {} : { param }),
    },
  };
};
