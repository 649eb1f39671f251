import { ACCEPT_QUOTE_AND_PAY_EXAMPLES } from '../../contexts/orders/quote-purchase.tools.js';
import { SEARCH_INVENTORY_SEMANTIC_EXAMPLES } from '../../contexts/catalog/catalog-semantic.tools.js';
import { SEARCH_INVENTORY_EXAMPLES } from '../../contexts/catalog/catalog.tools.js';
import {
  CONFIRM_PURCHASE_EXAMPLES,
  PREVIEW_CHECKOUT_EXAMPLES,
} from '../../contexts/orders/checkout-confirmation.tools.js';
import {
  BULK_UPSERT_LISTINGS_EXAMPLES,
  SET_LISTING_SHIPPING_EXAMPLES,
} from '../../contexts/listings/listing.tools.js';
import {
  BULK_MARK_SHIPPED_EXAMPLES,
  CANCEL_ORDER_EXAMPLES,
  OPEN_DISPUTE_EXAMPLES,
  SELLER_CANCEL_ORDER_EXAMPLES,
} from '../../contexts/orders/order.tools.js';
import {
  CLAIM_QUOTE_EXAMPLES,
  RESPOND_TO_COUNTER_OFFER_EXAMPLES,
  RESPOND_TO_QUOTE_EXAMPLES,
} from '../../contexts/quotes/quote.tools.js';
import { SUBSCRIBE_TO_QUERY_EXAMPLES } from '../../contexts/subscriptions/subscription.tools.js';
import type { CheckoutSessionView } from '../../contexts/orders/checkout.schema.js';
import type { OrderView } from '../../contexts/orders/order.schema.js';
import { ucpCheckoutView } from '../../contexts/orders/ucp-checkout.js';
import { acpCheckoutView } from '../../contexts/orders/acp-checkout.js';
import { ACP_ERROR_EXAMPLES } from '../../contexts/orders/acp-checkout.routes.js';
import type { OperationExamples } from './openapi.describe.js';
import { acpDiscovery, ucpProfile } from './discovery.routes.js';
import type { ProductDetails } from '../product.views.js';
import {
  ucpGetProductResponseOf,
  ucpLookupResponseOf,
  ucpSearchResponseOf,
} from '../../contexts/catalog/ucp-catalog.js';
import { UCP_CATALOG_EXAMPLES } from '../../contexts/catalog/ucp-catalog.tools.js';

/**
 * One realistic example per request body and successful answer of /openapi.json, keyed by operationId
 * (docs/agents.md, "Route docs → /openapi.json"). One lot, one quote and one order run through them all, so the
 * examples tell one story. Where a route takes what a tool takes, the body is the tool's own example (its id
 * field moves to the path), so the two cannot drift apart. openapi-examples.unit.test.ts checks that every
 * operation has them and that each validates against its own schema.
 */

const BASE = 'https://marketplace.example';
const PLACED_AT = '2026-11-26T15:04:05.000Z';
const LATER = '2026-11-27T09:30:00.000Z';
const WEEK_LATER = '2026-12-03T15:04:05.000Z';

/** A tool's first example without the fields a route takes in its path or headers. */
const without = (example: Readonly<Record<string, unknown>> | undefined, ...fields: string[]) =>
  Object.fromEntries(Object.entries(example ?? {}).filter(([field]) => !fields.includes(field)));

const IMAGE = `${BASE}/images/3f9a1c0d4e5b6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7.jpg`;

const PRODUCT_SUMMARY = {
  id: 'product_12',
  title: 'Pallet of 120 cordless drills, shelf pulls',
  description:
    '120 cordless 20 V drill/drivers in retail boxes, shelf pulls from a regional chain; all tested.',
  price: 2450,
  currency: 'USD',
  availability: 'in_stock',
  quantity_available: 120,
  images: [{ url: IMAGE }],
  url: `${BASE}/api/ucp/catalog/products/product_12`,
};

const FREIGHT = { mode: 'flat_per_order', cents: 15000 };

const PRODUCT = {
  ...PRODUCT_SUMMARY,
  sku: 'DRL-120-SP',
  brand: 'Torqline',
  category: 'tools',
  condition: 'shelf_pulls',
  pricing: {
    unit_price: 2450,
    currency: 'USD',
    original_retail_price: 8999,
    discount_percent: 73,
    min_order_quantity: 10,
    min_quote_quantity: 50,
    instant_checkout: true,
    bulk_threshold: { more_than_units: 100, more_than_subtotal: 500000 },
  },
  seller: { account_id: 7, name: 'Dana Whitfield', company: 'Ridgeway Surplus', country: 'US' },
  shipping: FREIGHT,
  promote_publicly: true,
  created_at: '2026-11-20T10:00:00.000Z',
  updated_at: PLACED_AT,
};

const SELLER_LISTING = { ...PRODUCT, status: 'active', version: 4, image_placeholder: false };

const HISTORY = [
  {
    party: 'seller',
    action: 'counter',
    price: 2300,
    message: 'Best we can do for 500 units.',
    at: PLACED_AT,
    expires_at: WEEK_LATER,
  },
];

const QUOTE_COMMON = {
  quote_request_id: 7,
  status: 'responded',
  product_id: 'product_12',
  product_name: PRODUCT.title,
  quantity: 500,
  listed_price: 2450,
  target_price: 2000,
  currency: 'USD',
  shipping: FREIGHT,
  response: {
    action: 'counter',
    counter_price: 2300,
    message: 'Best we can do for 500 units.',
    responded_at: PLACED_AT,
  },
  agreed_price: 2300,
  offer_expires_at: WEEK_LATER,
  negotiation_state: 'awaiting_buyer',
  history: HISTORY,
  created_at: '2026-11-25T18:00:00.000Z',
};

const BUYER_QUOTE = {
  ...QUOTE_COMMON,
  claimed_at: null,
  how_to_buy:
    'The seller countered: accept, counter (counter_price) or decline with respond_to_counter_offer ' +
    '(POST /api/ucp/quotes/7/respond), or buy at this price directly. Buy at the agreed price: preview_checkout ' +
    'with a line {product_id: "product_12", quantity: up to 500, quote_request_id: 7}, then confirm_purchase ' +
    'with its confirmation_token (or accept_quote_and_pay in one step). The price is used once.',
};

const SELLER_QUOTE = {
  ...QUOTE_COMMON,
  exceeds_available_stock: true,
  available_quantity: 120,
  buyer: { email: 'purchasing@buyer.example', name: null, company: 'Buyer Co' },
  buyer_verified: true,
  message: 'Can you do 500 units delivered by the 15th?',
  shipping_destination: 'Columbus, OH, US',
};

const ORDER = {
  order_id: 41,
  status: 'awaiting_shipment',
  product_id: 'product_12',
  product_name: PRODUCT.title,
  seller_id: 7,
  quantity: 10,
  unit_price: 2450,
  freight: 15000,
  total: 39500,
  currency: 'USD',
  quote_request_id: null,
  shipping_country: 'US',
  payment_terms: 'net_30',
  placed_at: PLACED_AT,
  ship_by: '2026-11-29T15:04:05.000Z',
  tracking: null,
  shipped_at: null,
  delivered_at: null,
  inspection_deadline: null,
  completed_at: null,
  issue: null,
  cancellation: null,
  resolution: null,
};

const TRACKING = {
  tracking_number: '1Z999AA10123456784',
  tracking_url: 'https://www.ups.com/track?tracknum=1Z999AA10123456784',
  carrier_name: 'UPS',
};

const SHIPPED_ORDER = { ...ORDER, status: 'shipped', tracking: TRACKING, shipped_at: LATER };

const DELIVERED_ORDER = {
  ...SHIPPED_ORDER,
  status: 'delivered',
  delivered_at: '2026-11-30T14:00:00.000Z',
  inspection_deadline: '2026-12-02T14:00:00.000Z',
};

const LINE = {
  product_id: 'product_12',
  title: PRODUCT.title,
  seller_id: 7,
  quantity: 10,
  unit_price: 2450,
  line_total: 24500,
  freight: 15000,
};

const CHECKOUT = {
  id: 'checkout_0193a4f2-7c1e-7b4a-9d2e-5f6a7b8c9d0e',
  status: 'ready_for_complete',
  line_items: [LINE],
  totals: { subtotal: 24500, freight: 15000, total: 39500 },
  currency: 'USD',
  messages: [],
  payment_terms: 'net_30',
  shipping_country: 'US',
  expires_at: '2026-11-26T15:34:05.000Z',
  order_ids: [],
};

const COMPLETED_CHECKOUT = {
  checkout: { ...CHECKOUT, status: 'completed', order_ids: [41] },
  orders: [ORDER],
};

/** ACP's Error answers of an operation, one per status it documents. */
const acpErrors = (statuses: readonly (keyof typeof ACP_ERROR_EXAMPLES)[]) =>
  Object.fromEntries(
    statuses.map((status) => [status, { type: 'invalid_request', ...ACP_ERROR_EXAMPLES[status] }]),
  );
const ACP_READ_ERRORS = acpErrors([400, 401, 403, 404, 405]);
const ACP_WRITE_ERRORS = acpErrors([400, 401, 403, 404, 405, 413, 415, 422]);
const ACP_CHANGE_ERRORS = acpErrors([400, 401, 403, 404, 405, 409, 413, 415, 422]);

const SUBSCRIPTION = {
  id: 'sub_0123456789abcdef01234567',
  query: { category: 'electronics', maxPrice: 5000, minQuantity: 100 },
  channels: [{ type: 'mcp_resource' }],
  created_at: PLACED_AT,
  resource_uri: 'marketplace://subscriptions/sub_0123456789abcdef01234567',
  resource_url: `${BASE}/api/mcp/resources/subscriptions/sub_0123456789abcdef01234567`,
};

const WEBHOOK = {
  id: 'whep_4f1c2b3a5d6e7f80',
  url: 'https://erp.ridgeway.example/hooks/marketplace',
  events: ['order.placed', 'quote.requested', 'order.disputed'],
  created_at: '2026-11-20T10:05:00.000Z',
  recent_deliveries: [
    {
      id: 'whd_0193a4f2-7c1e-7b4a-9d2e-5f6a7b8c9d0f',
      subject: 'order_41',
      status: 'delivered',
      attempts: 1,
      last_error: null,
      created_at: PLACED_AT,
      next_attempt_at: null,
      delivered_at: PLACED_AT,
    },
  ],
};

const PRODUCT_PAGE = {
  products: [PRODUCT_SUMMARY],
  pagination: { total: 1, limit: 20, offset: 0, has_more: false },
};

const SEARCH_CALL = { tool: 'search_inventory', parameters: SEARCH_INVENTORY_EXAMPLES[0] };

const JSON_RPC_CALL = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: SEARCH_CALL.tool, arguments: SEARCH_CALL.parameters },
};

const JSON_RPC_RESULT = {
  jsonrpc: '2.0',
  id: 1,
  result: {
    structuredContent: PRODUCT_PAGE,
    content: [{ type: 'text', text: JSON.stringify(PRODUCT_PAGE) }],
  },
};

const jsonRpcError = (code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0',
  id: null,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});

/** The JSON-RPC transports refuse at the HTTP level with a JSON-RPC error (json-rpc-error.ts). */
const JSON_RPC_REFUSALS = {
  400: jsonRpcError(-32600, 'Invalid Request: one JSON-RPC request object per POST'),
  401: jsonRpcError(-32000, 'The API key is not valid', {
    type: `${BASE}/problems/unauthenticated`,
    title: 'Authentication required',
    status: 401,
    detail: 'The API key is not valid',
  }),
  429: jsonRpcError(-32000, 'Rate limit reached: retry after 12 seconds'),
};

const SERVICE_INDEX = {
  name: 'Liquidation Marketplace',
  openapi: `${BASE}/openapi.json`,
  asyncapi: `${BASE}/asyncapi.json`,
  mcp: `${BASE}/mcp`,
  tool_manifest: `${BASE}/api/mcp/schema.json`,
  llms_txt: `${BASE}/llms.txt`,
};

const MARKDOWN_PAGE =
  '# Pallet of 120 cordless drills, shelf pulls\n\n- Price: $24.50 per unit (USD), 73% off retail\n' +
  '- Available: 120 units, minimum order 10\n- Freight: $150.00 per order\n\n' +
  'Ask for a bulk price with request_quote, or buy with preview_checkout and confirm_purchase.\n';

const SESSION_NOT_FOUND = jsonRpcError(
  -32001,
  'Session not found: it expired, was ended, lives on another replica or belongs to another credential; initialize again',
);
const NO_SESSION_405 = (method: string) =>
  jsonRpcError(
    -32000,
    `Method not allowed: ${method} without an Mcp-Session-Id. Without a session this MCP endpoint is stateless ` +
      'and takes POST only; initialize with a credential to open a session.',
  );

export const ROUTE_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  // catalog
  searchProducts: { responses: { 200: PRODUCT_PAGE } },
  semanticSearchProducts: {
    body: SEARCH_INVENTORY_SEMANTIC_EXAMPLES[0],
    responses: { 200: { products: [{ ...PRODUCT_SUMMARY, similarity: 0.82 }] } },
  },
  listCategories: {
    responses: {
      200: {
        categories: [
          { id: 'electronics', name: 'Electronics', product_count: 214 },
          { id: 'tools', name: 'Tools', product_count: 37 },
        ],
      },
    },
  },
  getProductDetails: { responses: { 200: PRODUCT } },
  // UCP's catalog is the same products translated (contexts/catalog/ucp-catalog.ts): built by the translation.
  searchUcpCatalog: {
    body: UCP_CATALOG_EXAMPLES.search,
    responses: {
      200: ucpSearchResponseOf(
        { products: [PRODUCT as ProductDetails], total: 14 },
        { query: 'cordless drill', category: 'tools', maxPriceCents: 5000, limit: 10, offset: 0 },
        BASE,
      ),
    },
  },
  lookupUcpCatalog: {
    body: UCP_CATALOG_EXAMPLES.lookup,
    responses: {
      200: ucpLookupResponseOf(
        { ids: [...UCP_CATALOG_EXAMPLES.lookup.ids] },
        new Map([['product_12', PRODUCT as ProductDetails]]),
        BASE,
      ),
    },
  },
  getUcpProduct: {
    body: UCP_CATALOG_EXAMPLES.product,
    responses: { 200: ucpGetProductResponseOf('product_12', PRODUCT as ProductDetails, BASE) },
  },
  // MCP transports
  mcpStreamableHttp: {
    body: JSON_RPC_CALL,
    responses: {
      200: JSON_RPC_RESULT,
      ...JSON_RPC_REFUSALS,
      403: jsonRpcError(-32000, 'Origin https://attacker.example is not allowed'),
      406: jsonRpcError(
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      ),
      404: SESSION_NOT_FOUND,
    },
  },
  mcpSessionStream: {
    responses: {
      200:
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/resources/updated",' +
        '"params":{"uri":"marketplace://subscriptions/sub_0123456789abcdef01234567"}}\n\n',
      401: JSON_RPC_REFUSALS[401],
      404: SESSION_NOT_FOUND,
      405: NO_SESSION_405('GET'),
      409: jsonRpcError(-32000, 'Conflict: Only one SSE stream is allowed per session'),
    },
  },
  mcpEndSession: {
    responses: { 401: JSON_RPC_REFUSALS[401], 404: SESSION_NOT_FOUND, 405: NO_SESSION_405('DELETE') },
  },
  mcpStreamable: { body: JSON_RPC_CALL, responses: { 200: JSON_RPC_RESULT, ...JSON_RPC_REFUSALS } },
  invokeMcpTool: { body: SEARCH_CALL, responses: { 200: PRODUCT_PAGE } },
  streamMcpTool: {
    body: SEARCH_CALL,
    responses: { 200: `event: message\ndata: ${JSON.stringify(PRODUCT_PAGE)}\n\nevent: done\ndata: {}\n\n` },
  },
  getToolManifest: {
    responses: {
      200: {
        schema_version: '1.0',
        tools: [
          {
            name: 'search_inventory',
            description: 'Search public liquidation lots by words, category, condition, discount and price.',
            input_schema: { type: 'object', properties: { query: { type: 'string' } } },
            output_schema: { type: 'object', properties: { products: { type: 'array' } } },
            auth: 'none',
          },
        ],
        resources: [{ name: 'stats', uri: 'marketplace://stats', mimeType: 'application/json' }],
        transports: { streamable_http: `${BASE}/mcp`, invoke: `${BASE}/api/mcp/invoke` },
      },
    },
  },
  // discovery
  // The documents themselves, built as the gateway builds them (without a signing key).
  getUcpProfile: { responses: { 200: ucpProfile(BASE) } },
  getAcpDiscovery: { responses: { 200: acpDiscovery(BASE) } },
  getAcpDiscoveryJson: { responses: { 200: acpDiscovery(BASE) } },
  getLlmsTxt: {
    responses: {
      200:
        '# Liquidation Marketplace\n\n> B2B surplus, overstock and returned inventory for agents.\n\n' +
        `- [OpenAPI](${BASE}/openapi.json)\n- [MCP](${BASE}/mcp)\n`,
    },
  },
  getOpenApi: { responses: { 200: { openapi: '3.1.0', info: { title: 'Liquidation Marketplace API' } } } },
  getAsyncApi: {
    responses: { 200: { asyncapi: '3.0.0', info: { title: 'Liquidation Marketplace events' } } },
  },
  getProductFeed: {
    responses: {
      200: {
        feed_spec_version: '2025-09-29',
        items: [
          {
            id: 'product_12',
            title: PRODUCT.title,
            description: PRODUCT.description,
            link: PRODUCT.url,
            enable_search: true,
            enable_checkout: false,
            image_link: IMAGE,
            condition: 'new',
            product_category: 'tools',
            price: '24.50 USD',
            freight: { mode: 'flat_per_order', price_per_order: '150.00 USD' },
            availability: 'in_stock',
            inventory_quantity: 120,
            seller_name: 'Ridgeway Surplus',
            seller_url: `${BASE}/api/ucp/catalog/products?seller=7`,
            seller_tos: `${BASE}/agents/terms.md`,
            return_policy: `${BASE}/agents/returns.md`,
            return_window: 2,
            markdown_link: `${BASE}/agents/products/product_12.md`,
            updated_at: PLACED_AT,
          },
        ],
        next_cursor: null,
        next: null,
      },
    },
  },
  getAgentSitemap: {
    responses: {
      200:
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' +
        `  <url><loc>${BASE}/llms.txt</loc></url>\n` +
        `  <url><loc>${BASE}/agents/products/product_12.md</loc><lastmod>${PLACED_AT}</lastmod></url>\n</urlset>\n`,
    },
  },
  getProductMarkdown: { responses: { 200: MARKDOWN_PAGE } },
  getTermsOfSale: {
    responses: {
      200: '# Terms of sale\n\nEvery lot is sold on invoice terms, net 30, as described in its listing.\n',
    },
  },
  getReturnPolicy: {
    responses: {
      200: '# Returns\n\nA delivered order may be inspected for 48 hours; report a problem with open_dispute.\n',
    },
  },
  getServiceIndex: { responses: { 200: SERVICE_INDEX } },
  getUcpServiceIndex: { responses: { 200: SERVICE_INDEX } },
  getUcpShoppingServiceIndex: { responses: { 200: SERVICE_INDEX } },
  getAcpServiceIndex: { responses: { 200: SERVICE_INDEX } },
  // quotes, buyer side
  requestQuote: {
    body: {
      product_id: 'product_12',
      quantity: 500,
      buyer: { email: 'purchasing@buyer.example', company: 'Buyer Co' },
      target_price: 2000,
      message: 'Can you do 500 units delivered by the 15th?',
      shipping_destination: 'Columbus, OH, US',
    },
    responses: {
      201: {
        quote_request_id: 7,
        claim_token: 'qct_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        status: 'pending',
        product_id: 'product_12',
        quantity: 500,
        exceeds_available_stock: true,
        expected_response: '24-48 hours',
        created_at: '2026-11-25T18:00:00.000Z',
      },
    },
  },
  listMyQuotes: { responses: { 200: { quote_requests: [BUYER_QUOTE], total: 1 } } },
  getQuoteStatus: { responses: { 200: BUYER_QUOTE } },
  acceptQuoteAndPay: {
    body: without(ACCEPT_QUOTE_AND_PAY_EXAMPLES[0], 'quote_request_id', 'idempotency_key'),
    responses: {
      201: {
        checkout_id: CHECKOUT.id,
        order: { ...ORDER, quantity: 500, unit_price: 2300, total: 1165000, quote_request_id: 7 },
      },
    },
  },
  claimQuote: {
    body: without(CLAIM_QUOTE_EXAMPLES[0], 'quote_request_id'),
    responses: { 200: { ...BUYER_QUOTE, claimed_at: LATER } },
  },
  respondToCounterOffer: {
    body: without(RESPOND_TO_COUNTER_OFFER_EXAMPLES[0], 'quote_request_id'),
    responses: {
      200: {
        ...BUYER_QUOTE,
        status: 'pending',
        negotiation_state: 'awaiting_seller',
        agreed_price: null,
        history: [
          ...HISTORY,
          {
            party: 'buyer',
            action: 'counter',
            price: 2100,
            message: 'Meet us at $21.00?',
            at: LATER,
            expires_at: '2026-12-04T09:30:00.000Z',
          },
        ],
        how_to_buy: "Waiting for the seller's answer to your counter-offer.",
      },
    },
  },
  // quotes, seller side
  listSellerQuotes: { responses: { 200: { quote_requests: [SELLER_QUOTE], total: 1 } } },
  respondToQuoteRequest: {
    body: without(RESPOND_TO_QUOTE_EXAMPLES[0], 'quote_request_id'),
    responses: { 200: SELLER_QUOTE },
  },
  // checkout
  // The UCP checkout is the same session translated (contexts/orders/ucp-checkout.ts): built by the translation.
  createUcpCheckout: {
    body: {
      line_items: [{ item: { id: 'product_12' }, quantity: 10 }],
      buyer: { email: 'purchasing@ridgeway.example', first_name: 'Dana', last_name: 'Ortiz' },
      context: { address_country: 'US' },
    },
    responses: { 201: ucpCheckoutView(BASE, CHECKOUT as CheckoutSessionView) },
  },
  getUcpCheckout: { responses: { 200: ucpCheckoutView(BASE, CHECKOUT as CheckoutSessionView) } },
  completeUcpCheckout: {
    responses: {
      200: ucpCheckoutView(
        BASE,
        COMPLETED_CHECKOUT.checkout as CheckoutSessionView,
        COMPLETED_CHECKOUT.orders as OrderView[],
      ),
    },
  },
  updateUcpCheckout: {
    body: {
      line_items: [{ item: { id: 'product_12' }, quantity: 10 }],
      context: { address_country: 'US' },
    },
    responses: { 200: ucpCheckoutView(BASE, CHECKOUT as CheckoutSessionView) },
  },
  cancelUcpCheckout: {
    responses: { 200: ucpCheckoutView(BASE, { ...CHECKOUT, status: 'canceled' } as CheckoutSessionView) },
  },
  createAcpCheckoutSession: {
    body: {
      line_items: [{ id: 'product_12', quantity: 10 }],
      currency: 'usd',
      capabilities: {},
      buyer: { email: 'purchasing@ridgeway.example', first_name: 'Dana', last_name: 'Ortiz' },
      fulfillment_details: { address: { country: 'US' } },
    },
    responses: {
      201: acpCheckoutView(BASE, CHECKOUT as CheckoutSessionView, [], Date.parse(PLACED_AT)),
      ...ACP_WRITE_ERRORS,
    },
  },
  getAcpCheckoutSession: {
    responses: {
      200: acpCheckoutView(BASE, CHECKOUT as CheckoutSessionView, [], Date.parse(PLACED_AT)),
      ...ACP_READ_ERRORS,
    },
  },
  updateAcpCheckoutSession: {
    body: {
      line_items: [{ id: 'product_12', quantity: 10 }],
      fulfillment_details: { address: { country: 'US' } },
    },
    responses: {
      200: acpCheckoutView(BASE, CHECKOUT as CheckoutSessionView, [], Date.parse(PLACED_AT)),
      ...ACP_CHANGE_ERRORS,
    },
  },
  completeAcpCheckoutSession: {
    body: { payment_data: { payment_terms: 'net_30', purchase_order_number: 'PO-2026-118' } },
    responses: {
      200: acpCheckoutView(
        BASE,
        COMPLETED_CHECKOUT.checkout as CheckoutSessionView,
        COMPLETED_CHECKOUT.orders as OrderView[],
        Date.parse(PLACED_AT),
      ),
      ...ACP_CHANGE_ERRORS,
    },
  },
  cancelAcpCheckoutSession: {
    body: { intent_trace: { reason_code: 'buyer_cancelled' } },
    responses: {
      200: acpCheckoutView(
        BASE,
        { ...CHECKOUT, status: 'canceled' } as CheckoutSessionView,
        [],
        Date.parse(PLACED_AT),
      ),
      ...ACP_WRITE_ERRORS,
      405: {
        type: 'invalid_request',
        code: 'not_cancelable',
        message: 'checkout … is completed: it can no longer be canceled',
      },
    },
  },
  createCheckout: {
    body: { line_items: [{ product_id: 'product_12', quantity: 10 }], shipping_country: 'US' },
    responses: { 201: CHECKOUT },
  },
  completeCheckout: { responses: { 200: COMPLETED_CHECKOUT } },
  previewCheckout: {
    body: PREVIEW_CHECKOUT_EXAMPLES[0],
    responses: {
      200: {
        status: 'ready_for_complete',
        line_items: [
          {
            ...LINE,
            quantity: 500,
            unit_price: 2300,
            line_total: 1150000,
            quote_request_id: 7,
            price_source: 'quote',
          },
        ],
        totals: { goods: 1150000, freight: 15000, total: 1165000 },
        currency: 'USD',
        payment_terms: 'net_30',
        shipping_country: 'US',
        escalations: [],
        confirmation_token: 'pct_example',
        confirmation_expires_at: '2026-11-26T15:09:05.000Z',
        digest: 'c0a8f1e2d3b4a5968778695a4b3c2d1e0f1a2b3c4d5e6f708192a3b4c5d6e7f8',
      },
    },
  },
  confirmPurchase: { body: CONFIRM_PURCHASE_EXAMPLES[0], responses: { 201: COMPLETED_CHECKOUT } },
  // orders, buyer side
  listMyOrders: { responses: { 200: { orders: [SHIPPED_ORDER, ORDER], next_cursor: null } } },
  cancelOrder: {
    body: without(CANCEL_ORDER_EXAMPLES[0], 'order_id'),
    responses: {
      200: {
        ...ORDER,
        status: 'cancelled',
        cancellation: { by: 'buyer', reason: 'Ordered the wrong lot.', cancelled_at: LATER },
      },
    },
  },
  getOrder: { responses: { 200: SHIPPED_ORDER } },
  confirmOrder: {
    responses: { 200: { ...DELIVERED_ORDER, status: 'completed', completed_at: '2026-12-01T08:00:00.000Z' } },
  },
  openDispute: {
    body: without(OPEN_DISPUTE_EXAMPLES[0], 'order_id'),
    responses: {
      201: {
        ...DELIVERED_ORDER,
        status: 'issue_reported',
        issue: {
          reason: 'damaged',
          description: 'Two of the ten units arrived with cracked housings.',
          requested_action: 'partial_refund',
          photo_urls: [],
          reported_at: '2026-12-01T08:00:00.000Z',
        },
      },
    },
  },
  // orders, seller side
  listSellerOrders: { responses: { 200: { orders: [ORDER], next_cursor: null } } },
  cancelSellerOrder: {
    body: without(SELLER_CANCEL_ORDER_EXAMPLES[0], 'order_id'),
    responses: {
      200: {
        ...ORDER,
        status: 'cancelled',
        cancellation: { by: 'seller', reason: 'The lot was damaged in our warehouse.', cancelled_at: LATER },
      },
    },
  },
  getSellerOrder: { responses: { 200: ORDER } },
  markOrderShipped: {
    body: without(BULK_MARK_SHIPPED_EXAMPLES[0], 'order_ids'),
    responses: { 200: SHIPPED_ORDER },
  },
  markOrderDelivered: { responses: { 200: DELIVERED_ORDER } },
  // listings
  listMyListings: { responses: { 200: { listings: [SELLER_LISTING], total: 1, next_cursor: null } } },
  getMyListing: { responses: { 200: SELLER_LISTING } },
  createListing: {
    // create_listing's example in the REST spelling: dollars, camelCase.
    body: {
      name: PRODUCT.title,
      description: PRODUCT.description,
      sku: 'DRL-120-SP',
      category: 'tools',
      condition: 'shelf_pulls',
      price: 24.5,
      quantity: 120,
      minOrderQuantity: 10,
      brand: 'Torqline',
      imageUrl: 'https://cdn.ridgeway.example/lots/drl-120-sp.jpg',
      promotePublicly: true,
      originalRetailPrice: 89.99,
      instantCheckout: true,
      shipping: { mode: 'flat_per_order', cents: 15000 },
    },
    responses: { 201: PRODUCT },
  },
  updateListing: {
    body: { price: 22, quantity: 90 },
    responses: { 200: { ...SELLER_LISTING, price: 2200, quantity_available: 90, version: 5 } },
  },
  withdrawListing: { responses: { 200: { ...SELLER_LISTING, status: 'withdrawn', version: 5 } } },
  relistListing: { responses: { 200: { ...SELLER_LISTING, version: 6 } } },
  setListingQuantity: {
    body: { quantity: 90 },
    responses: { 200: { ...SELLER_LISTING, quantity_available: 90, version: 5 } },
  },
  setListingShipping: {
    body: without(SET_LISTING_SHIPPING_EXAMPLES[0], 'product_id'),
    responses: { 200: SELLER_LISTING },
  },
  importListings: {
    body:
      'sku,name,description,category,condition,price,quantity\r\n' +
      'LAMP-001,Pallet of Brennick desk lamps,"40 LED desk lamps, boxed",office_supplies,customer_returns,18.50,40\r\n',
    responses: {
      202: {
        id: '6f1c2a8e-4d4b-4c52-9a53-0d3f3f7d1c11',
        status: 'queued',
        rows_total: 1,
        location: 'https://marketplace.example/api/products/imports/6f1c2a8e-4d4b-4c52-9a53-0d3f3f7d1c11',
      },
    },
  },
  getListingImport: {
    responses: {
      200: {
        id: '6f1c2a8e-4d4b-4c52-9a53-0d3f3f7d1c11',
        status: 'done',
        mode: 'upsert_by_sku',
        format: 'csv',
        progress: { rows_total: 2, rows_processed: 2 },
        summary: { created: 1, updated: 0, unchanged: 0, error: 1 },
        results: [
          { row: 2, status: 'created', product_id: 'product_12' },
          { row: 3, status: 'error' },
        ],
        errors: [{ row: 3, column: 'price', message: 'must be a number, not "ten"' }],
        created_at: '2026-11-26T23:00:00.000Z',
        finished_at: '2026-11-26T23:00:02.000Z',
      },
    },
  },
  bulkUpsertListings: {
    body: BULK_UPSERT_LISTINGS_EXAMPLES[0],
    responses: {
      200: {
        results: [{ index: 0, status: 'updated', product_id: 'product_12', version: 5 }],
        summary: { created: 0, updated: 1, unchanged: 0, error: 0 },
      },
    },
  },
  bulkUpdatePrice: {
    body: { productIds: ['product_12', 'product_13'], mode: 'price_percent_decrease', value: 10 },
    responses: {
      200: {
        updated: [{ ...PRODUCT, price: 2205, pricing: { ...PRODUCT.pricing, unit_price: 2205 } }],
        failures: [
          {
            product_id: 'product_13',
            reason: 'not_found',
            message: 'listing product_13 does not exist',
          },
        ],
      },
    },
  },
  bulkUpdateMoq: {
    body: { productIds: ['product_12'], minOrderQuantity: 20 },
    responses: {
      200: {
        updated: [{ ...PRODUCT, pricing: { ...PRODUCT.pricing, min_order_quantity: 20 } }],
        failures: [],
      },
    },
  },
  // agent tokens
  issueAgentToken: {
    responses: {
      201: {
        token: 's_0193a4f2.1764255845000.21.Qm9vbUJvb21Cb29tQm9vbUJvb21Cb29tQm9vbQ',
        expires_at: '2026-11-27T15:04:05.000Z',
      },
    },
  },
  // saved searches
  subscribe: {
    body: SUBSCRIBE_TO_QUERY_EXAMPLES[0],
    responses: {
      201: {
        ...SUBSCRIPTION,
        unsubscribe_token: 'ust_0123456789abcdef01234567.Zm9vYmFyYmF6',
        webhook_secret: null,
      },
    },
  },
  listSubscriptions: { responses: { 200: { subscriptions: [SUBSCRIPTION] } } },
  rotateWebhookSecret: {
    body: { current_secret: 'whsec_Rk9PQkFSQkFaUVVYMTIzNDU2Nzg5MA' },
    responses: {
      200: {
        id: SUBSCRIPTION.id,
        webhook_secret: 'whsec_TmV3U2VjcmV0Rm9yVGhlV2ViaG9vaw',
        secret_generation: 2,
        previous_secret_valid_until: '2026-11-27T15:04:05.000Z',
      },
    },
  },
  unsubscribePage: {
    responses: {
      200: '<!doctype html><title>Unsubscribe</title><form method="post"><button>Unsubscribe</button></form>',
    },
  },
  unsubscribe: { responses: { 200: { id: SUBSCRIPTION.id, unsubscribed: true } } },
  emailConfirmationPage: {
    responses: {
      200:
        '<!doctype html><title>Confirm your address</title><form method="post">' +
        '<button>Confirm buyer@ridgeway.example</button></form>',
    },
  },
  confirmEmail: { responses: { 200: { confirmed: true, mailbox: 'buyer@ridgeway.example' } } },
  getSubscriptionResource: {
    responses: {
      200: {
        subscription: SUBSCRIPTION,
        matches: [{ matched_at: PLACED_AT, product: PRODUCT_SUMMARY }],
        deliveries: [],
      },
    },
  },
  // seller webhooks
  registerSellerWebhook: {
    body: { url: WEBHOOK.url },
    responses: {
      201: { ...WEBHOOK, recent_deliveries: [], secret: 'whsec_U2VsbGVyRW5kcG9pbnRTZWNyZXQxMjM0' },
    },
  },
  listSellerWebhooks: { responses: { 200: { webhooks: [WEBHOOK] } } },
};
