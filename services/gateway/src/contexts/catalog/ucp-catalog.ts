import { z } from 'zod';
import { CATALOG_SEARCH_LIMITS, CATEGORIES, CONDITIONS, LISTING_LIMITS } from '@marketplace/vocabulary';
import { RETURN_POLICY_PATH, TERMS_PATH } from '../../edge/discovery/policies.routes.js';
import type { ProductDetails } from '../../edge/product.views.js';
import { sellerDisplayNameOf } from '../../edge/product.views.js';
import { productIdSchema } from '../../edge/schemas/fields.schema.js';
import { characterCount } from '../../edge/schemas/validate.js';
import { UCP_CAPABILITIES, ucpCatalogMetadata } from '../../edge/ucp.js';
import type { CatalogQueries, CatalogSearch } from './catalog.queries.js';
import { markdownUrlOf } from './markdown.routes.js';

/**
 * UCP's catalog capabilities (`dev.ucp.shopping.catalog.search` and `.lookup`, release 2026-04-08;
 * docs/protocols.md §2.4) as a translation of the catalog's own search and product reads: which listings match
 * and in what order is the catalog's rule (the same search as GET /api/ucp/catalog/products); this file renames.
 * A lot is a UCP product with one variant, whose id is the product id (as in UCP checkout, `item.id`).
 */

/** The catalog's text limit (see @marketplace/search): longer queries are refused, not truncated. */
const MAX_QUERY_CHARACTERS = 1_000;
/** UCP: implementations SHOULD accept at least 10 ids; more than this is a 400 (`request_too_large`). */
export const MAX_LOOKUP_IDS = 50;
/** UCP's default page size (docs/protocols.md §2.4, `pagination.limit`); at most the catalog's page size. */
const DEFAULT_PAGE_SIZE = 10;
/** The catalog's paging fields are int32. */
const MAX_OFFSET = 2_147_483_647;
/** Ids are ours (`product_<n>`) or a platform's guess: a long one cannot be ours and is refused. */
const MAX_ID_CHARACTERS = 200;

const wholeNumber = (min: number, max: number) =>
  z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

const cents = wholeNumber(0, LISTING_LIMITS.maxPriceCents);

/** The opaque `pagination.cursor`: the offset of the next page in the same search. */
export const cursorOf = (offset: number): string => Buffer.from(`o${offset}`).toString('base64url');

const cursorSchema = z.string({ error: 'must be a string' }).transform((cursor, ctx) => {
  const match = /^o(0|[1-9][0-9]{0,9})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  const offset = match ? Number(match[1]) : Number.NaN;
  if (!(offset <= MAX_OFFSET)) {
    ctx.addIssue({ code: 'custom', message: 'must be a cursor a previous page answered' });
    return z.NEVER;
  }
  return offset;
});

/**
 * `filters` (docs/protocols.md §2.4): `categories` (our category ids; the catalog filters by one), `price`
 * (`min`/`max` in cents, inclusive) and our own `condition` (UCP lets a business add filters). Another filter
 * is refused: a filter we do not apply would silently widen the results.
 */
const searchFiltersSchema = z.strictObject(
  {
    categories: z
      .array(z.enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(', ')}` }), {
        error: 'must be an array of category ids',
      })
      .min(1, 'must have at least 1 category')
      .max(1, 'must have at most 1 category: the catalog filters by one')
      .optional(),
    price: z
      .strictObject(
        { min: cents.optional(), max: cents.optional() },
        { error: 'must be an object with min and/or max in cents' },
      )
      .refine(({ min, max }) => min === undefined || max === undefined || min <= max, {
        path: ['min'],
        message: 'must not exceed max',
      })
      .optional(),
    condition: z.enum(CONDITIONS, { error: `must be one of ${CONDITIONS.join(', ')}` }).optional(),
  },
  { error: (issue) => (issue.code === 'invalid_type' ? 'must be an object' : undefined) },
);

/**
 * The search request (docs/protocols.md §2.4). `context`, `signals` and `attribution` are accepted and not read
 * (prices are USD, the catalog is the same everywhere). At least a query or a filter: an empty search is a 400.
 */
export const ucpSearchRequestSchema = z
  .object(
    {
      query: z
        .string({ error: 'must be a string' })
        .refine(
          (query) => characterCount(query) <= MAX_QUERY_CHARACTERS,
          `must be at most ${MAX_QUERY_CHARACTERS} characters`,
        )
        .transform((query) => query.trim())
        .optional(),
      filters: searchFiltersSchema.optional(),
      pagination: z
        .object(
          {
            cursor: cursorSchema.optional(),
            limit: wholeNumber(1, CATALOG_SEARCH_LIMITS.maxLimit).default(DEFAULT_PAGE_SIZE),
          },
          { error: 'must be an object' },
        )
        .optional(),
    },
    { error: 'must be a JSON object' },
  )
  .refine(
    ({ query, filters }) =>
      (query !== undefined && query !== '') ||
      (filters !== undefined && Object.values(filters).some((filter) => filter !== undefined)),
    { path: ['query'], message: 'give a query or at least one filter (categories, price, condition)' },
  );
export type UcpSearchRequest = z.output<typeof ucpSearchRequestSchema>;

/** Lookup and get_product take no filters here: only search applies the catalog's filters. */
const noFilters = z
  .never({ error: 'are not supported on lookup: filter with catalog search instead' })
  .optional();

/** The lookup request: product (= variant) ids, deduplicated; unknown ids are left out of the answer. */
export const ucpLookupRequestSchema = z.object(
  {
    ids: z
      .array(
        z
          .string({ error: 'must be a string' })
          .min(1, 'must not be empty')
          .max(MAX_ID_CHARACTERS, `must be at most ${MAX_ID_CHARACTERS} characters`),
        { error: 'must be an array of product ids' },
      )
      .min(1, 'must have at least 1 id')
      .max(MAX_LOOKUP_IDS, `must have at most ${MAX_LOOKUP_IDS} ids (request_too_large)`),
    filters: noFilters,
  },
  { error: 'must be a JSON object' },
);
export type UcpLookupRequest = z.output<typeof ucpLookupRequestSchema>;

/** get_product: one product (= variant) id. `selected`/`preferences` are not read: a lot has no options. */
export const ucpGetProductRequestSchema = z.object(
  {
    id: z
      .string({ error: 'is required and must be a string' })
      .min(1, 'must not be empty')
      .max(MAX_ID_CHARACTERS, `must be at most ${MAX_ID_CHARACTERS} characters`),
    filters: noFilters,
  },
  { error: 'must be a JSON object' },
);
export type UcpGetProductRequest = z.output<typeof ucpGetProductRequestSchema>;

/** The catalog search a UCP search request asks for. */
export const catalogSearchOfUcp = (request: UcpSearchRequest): CatalogSearch => ({
  query: request.query === '' ? undefined : request.query,
  category: request.filters?.categories?.[0],
  condition: request.filters?.condition,
  minPriceCents: request.filters?.price?.min,
  maxPriceCents: request.filters?.price?.max,
  limit: request.pagination?.limit ?? DEFAULT_PAGE_SIZE,
  offset: request.pagination?.cursor ?? 0,
});

/** The ids a lookup names that can be ours, each once, in the order given. */
export const lookupIdsOf = (request: UcpLookupRequest): string[] =>
  [...new Set(request.ids)].filter((id) => productIdSchema.safeParse(id).success);

const price = (amount: number, currency: string) => ({ amount, currency });

/** A lot as a UCP product (docs/protocols.md §2.4, "Product" and "Variant"): one variant, the lot itself. */
export const ucpProductOf = (product: ProductDetails, publicBaseUrl: string) => {
  const { pricing } = product;
  const url = markdownUrlOf(publicBaseUrl, product.id);
  const unitPrice = price(pricing.unit_price, pricing.currency);
  // The original retail price is a list price only above what the lot sells for (a strikethrough price).
  const listPrice =
    pricing.original_retail_price !== null && pricing.original_retail_price > pricing.unit_price
      ? price(pricing.original_retail_price, pricing.currency)
      : undefined;
  const description = { plain: product.description };
  return {
    id: product.id,
    title: product.title,
    description,
    url,
    categories: [{ value: product.category, taxonomy: 'merchant' }],
    price_range: { min: unitPrice, max: unitPrice },
    ...(listPrice === undefined ? {} : { list_price_range: { min: listPrice, max: listPrice } }),
    media: product.images.map((image) => ({ type: 'image', url: image.url, alt_text: product.title })),
    variants: [
      {
        id: product.id,
        ...(product.sku === '' ? {} : { sku: product.sku }),
        title: product.title,
        description,
        url,
        price: unitPrice,
        ...(listPrice === undefined ? {} : { list_price: listPrice }),
        availability: {
          available: product.quantity_available > 0,
          status: product.quantity_available > 0 ? ('in_stock' as const) : ('out_of_stock' as const),
        },
        seller: {
          name: sellerDisplayNameOf(product.seller),
          links: [
            { type: 'terms_of_service', url: `${publicBaseUrl}${TERMS_PATH}`, title: 'Terms of sale' },
            { type: 'refund_policy', url: `${publicBaseUrl}${RETURN_POLICY_PATH}`, title: 'Return policy' },
          ],
        },
        // What decides between checkout and a quote (docs/specification.md, "Checkout and orders").
        metadata: {
          quantity_available: product.quantity_available,
          min_order_quantity: pricing.min_order_quantity,
          min_quote_quantity: pricing.min_quote_quantity,
          instant_checkout: pricing.instant_checkout,
          bulk_threshold: pricing.bulk_threshold,
        },
      },
    ],
    ...(product.condition === null ? {} : { tags: [product.condition] }),
    metadata: {
      condition: product.condition,
      brand: product.brand,
      shipping: product.shipping,
      details_url: product.url,
    },
  };
};
export type UcpProduct = ReturnType<typeof ucpProductOf>;

/** The search answer: one page, and a cursor to the next while there is one. */
export const ucpSearchResponseOf = (
  page: { readonly products: readonly ProductDetails[]; readonly total: number },
  search: CatalogSearch,
  publicBaseUrl: string,
) => {
  const next = search.offset + page.products.length;
  const hasNextPage = page.products.length > 0 && next < page.total;
  return {
    ucp: ucpCatalogMetadata(UCP_CAPABILITIES.catalogSearch),
    products: page.products.map((product) => ucpProductOf(product, publicBaseUrl)),
    pagination: {
      has_next_page: hasNextPage,
      ...(hasNextPage ? { cursor: cursorOf(next) } : {}),
      total_count: page.total,
    },
  };
};

/**
 * The lookup answer (docs/protocols.md §2.4): each product found once, in the order first asked for, its variant
 * with the `inputs` that resolved to it (`exact`: a product id is its one variant's id); an info message
 * `not_found` per id that names no public listing.
 */
export const ucpLookupResponseOf = (
  request: UcpLookupRequest,
  found: ReadonlyMap<string, ProductDetails>,
  publicBaseUrl: string,
) => {
  const ids = [...new Set(request.ids)];
  const products = ids.flatMap((id) => {
    const product = found.get(id);
    if (product === undefined) return [];
    const ucpProduct = ucpProductOf(product, publicBaseUrl);
    return [
      {
        ...ucpProduct,
        variants: ucpProduct.variants.map((variant) => ({
          ...variant,
          inputs: [{ id, match: 'exact' as const }],
        })),
      },
    ];
  });
  const missing = ids.filter((id) => !found.has(id));
  return {
    ucp: ucpCatalogMetadata(UCP_CAPABILITIES.catalogLookup),
    products,
    ...(missing.length === 0
      ? {}
      : {
          messages: missing.map((id) => ({ type: 'info' as const, code: 'not_found', content: id })),
        }),
  };
};

/** get_product's answer; an unknown id is an application outcome: 200 with `ucp.status: "error"`. */
export const ucpGetProductResponseOf = (
  id: string,
  product: ProductDetails | undefined,
  publicBaseUrl: string,
) =>
  product === undefined
    ? {
        ucp: ucpCatalogMetadata(UCP_CAPABILITIES.catalogLookup, 'error'),
        messages: [
          {
            type: 'error' as const,
            code: 'not_found',
            content: `Product not found: ${id}`,
            severity: 'unrecoverable' as const,
          },
        ],
      }
    : {
        ucp: ucpCatalogMetadata(UCP_CAPABILITIES.catalogLookup),
        product: ucpProductOf(product, publicBaseUrl),
      };

/** The three operations over the catalog's reads, shared by the REST routes and the MCP tools. */
export const ucpCatalogOperations = (catalog: CatalogQueries, publicBaseUrl: string) => ({
  search: async (request: UcpSearchRequest) => {
    const search = catalogSearchOfUcp(request);
    return ucpSearchResponseOf(await catalog.searchDetails(search), search, publicBaseUrl);
  },
  lookup: async (request: UcpLookupRequest) =>
    ucpLookupResponseOf(request, await catalog.publicDetails(lookupIdsOf(request)), publicBaseUrl),
  getProduct: async (request: UcpGetProductRequest) => {
    const found = await catalog.publicDetails(lookupIdsOf({ ids: [request.id] }));
    return ucpGetProductResponseOf(request.id, found.get(request.id), publicBaseUrl);
  },
});

// The answers' shapes for /openapi.json and the tools' output schemas; e2e/schemas/ucp-catalog.schema.json is
// the independent encoding the end-to-end tests validate against.

const ucpMetadataOutput = z.object({
  version: z.string(),
  status: z.literal('error').optional(),
  capabilities: z.record(z.string(), z.array(z.object({ version: z.string() }))),
});
const priceOutput = z.object({
  amount: z.number().int().describe('minor units (cents)'),
  currency: z.string(),
});
const priceRangeOutput = z.object({ min: priceOutput, max: priceOutput });
const descriptionOutput = z.object({ plain: z.string() });
const variantOutput = z.object({
  id: z.string().describe('the product id: a lot is one variant'),
  sku: z.string().optional(),
  title: z.string(),
  description: descriptionOutput,
  url: z.string(),
  price: priceOutput,
  list_price: priceOutput.optional(),
  availability: z.object({ available: z.boolean(), status: z.enum(['in_stock', 'out_of_stock']) }),
  seller: z.object({
    name: z.string(),
    links: z.array(z.object({ type: z.string(), url: z.string(), title: z.string() })),
  }),
  metadata: z.object({
    quantity_available: z.number().int(),
    min_order_quantity: z.number().int(),
    min_quote_quantity: z.number().int(),
    instant_checkout: z.boolean(),
    bulk_threshold: z.object({ more_than_units: z.number().int(), more_than_subtotal: z.number().int() }),
  }),
});
const productFields = {
  id: z.string(),
  title: z.string(),
  description: descriptionOutput,
  url: z.string().describe('the markdown page of the lot'),
  categories: z.array(z.object({ value: z.string(), taxonomy: z.string() })),
  price_range: priceRangeOutput,
  list_price_range: priceRangeOutput.optional(),
  media: z.array(z.object({ type: z.string(), url: z.string(), alt_text: z.string() })),
  tags: z.array(z.string()).optional(),
  metadata: z.looseObject({
    condition: z.string().nullable(),
    brand: z.string().nullable(),
    details_url: z.string(),
  }),
};
export const ucpProductOutput = z.object({ ...productFields, variants: z.array(variantOutput).min(1) });
const messageOutput = z.object({
  type: z.enum(['info', 'error']),
  code: z.string(),
  content: z.string(),
  severity: z.enum(['unrecoverable']).optional(),
});

export const ucpSearchResponseOutput = z
  .object({
    ucp: ucpMetadataOutput,
    products: z.array(ucpProductOutput),
    pagination: z.object({
      has_next_page: z.boolean(),
      cursor: z.string().optional().describe('present when has_next_page: pass it as pagination.cursor'),
      total_count: z.number().int(),
    }),
  })
  .describe('A UCP catalog search answer (UCP 2026-04-08, dev.ucp.shopping.catalog.search)');

export const ucpLookupResponseOutput = z
  .object({
    ucp: ucpMetadataOutput,
    products: z.array(
      z.object({
        ...productFields,
        variants: z
          .array(
            variantOutput.extend({
              inputs: z.array(z.object({ id: z.string(), match: z.literal('exact') })).min(1),
            }),
          )
          .min(1),
      }),
    ),
    messages: z.array(messageOutput).optional().describe('an info not_found per id that names no public lot'),
  })
  .describe('A UCP catalog lookup answer (UCP 2026-04-08, dev.ucp.shopping.catalog.lookup)');

export const ucpGetProductResponseOutput = z
  .object({
    ucp: ucpMetadataOutput,
    product: ucpProductOutput.optional().describe('absent when not found (then ucp.status is error)'),
    messages: z.array(messageOutput).optional(),
  })
  .describe('A UCP get_product answer (UCP 2026-04-08, dev.ucp.shopping.catalog.lookup)');
