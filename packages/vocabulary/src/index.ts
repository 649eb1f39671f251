/**
 * Words and limits every surface must agree on (docs/specification.md: "Products and pagination", "Listings", "Limits").
 * The gateway's request schemas and the services' deciders both read them from here, so a limit changes once.
 */
export const CONDITIONS = [
  'salvage',
  'customer_returns',
  'shelf_pulls',
  'overstock',
  'new_or_refurbished',
] as const;
export type Condition = (typeof CONDITIONS)[number];

export const CATEGORIES = [
  'electronics',
  'apparel',
  'home_goods',
  'beauty',
  'sports',
  'kitchenware',
  'office_supplies',
  'toys',
  'food_beverage',
  'tools',
  'other',
] as const;
export type Category = (typeof CATEGORIES)[number];

/** Display names for GET /api/ucp/catalog/categories. */
export const CATEGORY_NAMES: Record<Category, string> = {
  electronics: 'Electronics',
  apparel: 'Apparel',
  home_goods: 'Home Goods',
  beauty: 'Beauty',
  sports: 'Sports',
  kitchenware: 'Kitchenware',
  office_supplies: 'Office Supplies',
  toys: 'Toys',
  food_beverage: 'Food & Beverage',
  tools: 'Tools',
  other: 'Other',
};

export const isCondition = (value: string): value is Condition =>
  (CONDITIONS as readonly string[]).includes(value);
export const isCategory = (value: string): value is Category =>
  (CATEGORIES as readonly string[]).includes(value);

export const LISTING_LIMITS = {
  nameMaxLength: 500,
  descriptionMaxLength: 10_000,
  galleryMaxItems: 8,
  skuMaxLength: 255,
  brandMaxLength: 255,
  urlMaxLength: 2_000,
  /** Largest unit price accepted, in cents ($10 million): keeps totals far inside safe integers. */
  maxPriceCents: 1_000_000_000,
  /** Largest lot, in units. */
  maxQuantity: 100_000_000,
} as const;

/**
 * bulk_update_listings (docs/specification.md): one mode and one value for up to `maxItems` of a seller's
 * listings; prices in cents, percentages in percent, moq in units.
 */
export const BULK_UPDATE_MODES = [
  'price_set',
  'price_percent_increase',
  'price_percent_decrease',
  'moq_set',
] as const;
export type BulkUpdateMode = (typeof BULK_UPDATE_MODES)[number];
export const BULK_UPDATE_LIMITS = { maxItems: 200 } as const;

/**
 * How a bulk upsert keys its items (docs/specification.md, "Bulk upsert"): `create` makes a listing of every
 * item; `upsert_by_sku` updates the seller's one listing with the item's sku and creates one where there is none
 * (sku stays non-unique otherwise, so this is asked for, never assumed).
 */
export const BULK_UPSERT_MODES = ['create', 'upsert_by_sku'] as const;
export type BulkUpsertMode = (typeof BULK_UPSERT_MODES)[number];
export const BULK_UPSERT_LIMITS = {
  maxItems: 1_000,
  /** A call's deadline between services: 1,000 items with their image fetches take far longer than one write. */
  callDeadlineMs: 120_000,
} as const;

/** A lot's freight terms (docs/specification.md, "Checkout and orders": freight). */
export const SHIPPING_MODES = [
  'included',
  'flat_per_order',
  'per_unit',
  'buyer_pickup',
  'quoted_on_request',
] as const;
export type ShippingMode = (typeof SHIPPING_MODES)[number];
/** Longest ship-from region a buyer-pickup lot names. */
export const SHIP_FROM_REGION_MAX_LENGTH = 120;

export const LISTING_DEFAULTS = {
  priceCents: 100,
  quantity: 1,
  category: 'electronics' as Category,
  currency: 'USD',
} as const;

export const CATALOG_SEARCH_LIMITS = { defaultLimit: 20, maxLimit: 100 } as const;

/**
 * The bulk threshold (docs/specification.md, "Checkout and orders"; defaults, configurable where checkout runs): a line
 * of more than `moreThanUnits` units or more than `moreThanSubtotalCents` goes through a quote, not checkout.
 */
export const BULK_THRESHOLD_DEFAULTS = { moreThanUnits: 100, moreThanSubtotalCents: 500_000 } as const;

/**
 * Staleness (docs/specification.md, "Listings"): a listing whose availability nobody confirmed for `staleAfterDays` gets one
 * email to its seller per stale period; the check runs every `checkIntervalMs` by default.
 */
export const LISTING_STALENESS = { staleAfterDays: 90, checkIntervalMs: 60 * 60 * 1_000 } as const;

/**
 * Quote requests (docs/specification.md, "Quotes", 4.3, 8; docs/specification.md, "Quotes"): the quantity may exceed the listed stock (no upper
 * bound against it, only the lot-size sanity bound of listings); texts are bounded so an email stays readable.
 */
export const QUOTE_LIMITS = {
  maxQuantity: LISTING_LIMITS.maxQuantity,
  buyerNameMaxLength: 255,
  buyerCompanyMaxLength: 255,
  emailMaxLength: 254,
  messageMaxLength: 2_000,
  /** Where the lot ships to (free text: an address, a city, a ZIP code); freight is priced for it. */
  shippingDestinationMaxLength: 300,
  /** What a buyer is told to expect (docs/specification.md, "Service", 8). */
  expectedResponse: '24-48 hours',
  /** How long a seller's accepted or countered price can be bought (docs/specification.md, "Quotes"). */
  offerValidityMs: 7 * 24 * 3_600_000,
  /** Steps (answers and counters of both sides) a negotiation may take after the request. */
  maxNegotiationSteps: 20,
  /** The page size of a buyer's quote list: default and maximum. */
  defaultListLimit: 50,
  maxListLimit: 200,
} as const;

export const QUOTE_STATUSES = ['pending', 'responded'] as const;
export type QuoteStatus = (typeof QUOTE_STATUSES)[number];
/** The status filter of get_quote_requests (docs/specification.md, "MCP tools"). */
export const QUOTE_STATUS_FILTERS = ['pending', 'responded', 'all'] as const;
export type QuoteStatusFilter = (typeof QUOTE_STATUS_FILTERS)[number];
export const QUOTE_ACTIONS = ['accept', 'counter', 'decline'] as const;
export type QuoteAction = (typeof QUOTE_ACTIONS)[number];
export const isQuoteAction = (value: string): value is QuoteAction =>
  (QUOTE_ACTIONS as readonly string[]).includes(value);
/** Who took a step of a quote negotiation. */
export const QUOTE_PARTIES = ['buyer', 'seller'] as const;
export type QuoteParty = (typeof QUOTE_PARTIES)[number];
/**
 * Where a negotiation stands: the seller's turn, the buyer's turn (a seller counter-offer is open), a price
 * agreed (either side accepted), or declined (by either side).
 */
export const QUOTE_NEGOTIATION_STATES = ['awaiting_seller', 'awaiting_buyer', 'agreed', 'declined'] as const;
export type QuoteNegotiationState = (typeof QUOTE_NEGOTIATION_STATES)[number];

export { isCountryCode } from './country-codes.js';
