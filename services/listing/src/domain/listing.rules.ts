import { z } from 'zod';
import type { AppError, FieldViolation } from '@marketplace/platform';
import { parseProductId, validationError } from '@marketplace/platform';
import type { BulkUpdateMode } from '@marketplace/vocabulary';
import {
  CATEGORIES,
  CONDITIONS,
  LISTING_DEFAULTS,
  LISTING_LIMITS,
  SHIP_FROM_REGION_MAX_LENGTH,
  SHIPPING_MODES,
} from '@marketplace/vocabulary';
import type { ListingChanges, ListingDraft, ShippingDraft } from './listing.commands.js';
import type { ListingShipping } from './listing.events.js';

/**
 * The listing rules of docs/specification.md, "Listings" that need no I/O. Every rule runs, so a seller learns every problem of a draft
 * from one answer. Violation paths are the REST field names (`price`, `galleryImageUrls/3`); the gateway
 * renames them for surfaces that spell fields differently.
 */

/** Characters as JSON Schema's maxLength counts them: code points, so an emoji is one character. */
const characterCount = (text: string): number => [...text].length;

const text = (maxLength: number) =>
  z
    .string()
    .trim()
    .refine((value) => characterCount(value) <= maxLength, `must be at most ${maxLength} characters`);

const requiredText = (maxLength: number) =>
  text(maxLength).refine((value) => value.length > 0, 'is required');

/** Seller systems often send empty columns: a blank optional text counts as not sent. */
const optionalText = (maxLength: number) =>
  text(maxLength)
    .optional()
    .transform((value) => (value === '' ? undefined : value));

const cents = z
  .int({ error: 'must be a whole number of cents' })
  .positive('must be greater than 0')
  .max(
    LISTING_LIMITS.maxPriceCents,
    `must be at most $${(LISTING_LIMITS.maxPriceCents / 100).toLocaleString('en-US')}`,
  );

const units = z
  .int({ error: 'must be a whole number' })
  .min(1, 'must be at least 1')
  .max(LISTING_LIMITS.maxQuantity, `must be at most ${LISTING_LIMITS.maxQuantity}`);

const imageUrl = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' })
  .max(LISTING_LIMITS.urlMaxLength, `must be at most ${LISTING_LIMITS.urlMaxLength} characters`);

const oneOf = (values: readonly string[]) => ({ error: `must be one of ${values.join(', ')}` });
const category = z.enum(CATEGORIES, oneOf(CATEGORIES));
const condition = z.enum(CONDITIONS, oneOf(CONDITIONS));

/**
 * Freight terms inside a listing (create or change): the rules of SetListingShipping (checkShipping), each
 * violation under `shipping/<field>`.
 */
const shippingTerms = z
  .object({
    mode: z.string({ error: 'must be a string' }),
    cents: z.number({ error: 'must be a whole number of cents' }).optional(),
    shipFromRegion: z.string({ error: 'must be a string' }).optional(),
  })
  .transform((draft, ctx): ListingShipping => {
    const checked = checkShipping(draft);
    if ('shipping' in checked) return checked.shipping;
    for (const { path, message } of checked.violations)
      ctx.addIssue({ code: 'custom', message, path: [path] });
    return z.NEVER;
  });

/** The two fields of the cross-field rule, checked on their own to know whether the rule can run. */
const orderQuantities = z.object({
  quantity: units.default(LISTING_DEFAULTS.quantity),
  minOrderQuantity: units.default(1),
});

const newListingSchema = z
  .object({
    sellerAccountId: z.int({ error: 'must be an account id' }).positive('must be an account id'),
    name: requiredText(LISTING_LIMITS.nameMaxLength),
    description: requiredText(LISTING_LIMITS.descriptionMaxLength),
    sku: optionalText(LISTING_LIMITS.skuMaxLength),
    category: category.default(LISTING_DEFAULTS.category),
    condition: condition.optional(),
    priceCents: cents.default(LISTING_DEFAULTS.priceCents),
    ...orderQuantities.shape,
    minQuoteQuantity: units.default(1),
    brand: optionalText(LISTING_LIMITS.brandMaxLength),
    imageUrl: imageUrl.optional(),
    // A refinement, not .max(): zod's length check on an array hides the violations of its items.
    galleryImageUrls: z
      .array(imageUrl)
      .refine((urls) => urls.length <= LISTING_LIMITS.galleryMaxItems, {
        message: `must have at most ${LISTING_LIMITS.galleryMaxItems} items`,
      })
      .default([]),
    originalRetailPriceCents: cents.optional(),
    instantCheckout: z.boolean().default(false),
    promotePublicly: z.boolean().default(false),
    shipping: shippingTerms.optional(),
  })
  // zod skips an object's refinements once any field failed hard (an unknown category, say); `when` still
  // runs this rule whenever its own two fields are valid, so the seller hears about it in the same answer.
  .refine((listing) => listing.minOrderQuantity <= listing.quantity, {
    path: ['minOrderQuantity'],
    message: 'must not exceed quantity',
    when: ({ value }) => orderQuantities.safeParse(value).success,
  });

/** A seller and draft that passed the rules, with every default applied. */
export type ValidNewListing = z.output<typeof newListingSchema>;

/** Domain field names that differ from the REST field names of docs/specification.md, "Listings". */
const REST_FIELD_NAMES: ReadonlyMap<string, string> = new Map([
  ['priceCents', 'price'],
  ['originalRetailPriceCents', 'originalRetailPrice'],
]);

/** The REST name of a listing field (`priceCents` → `price`), as violations and changed fields spell it. */
export const restFieldName = (field: string): string => REST_FIELD_NAMES.get(field) ?? field;

const violationOf = ({ path, message }: z.core.$ZodIssue): FieldViolation => {
  const [field = '', ...rest] = path.map(String);
  return { path: [restFieldName(field), ...rest].join('/'), message };
};

/** Checks a draft against every rule; throws AppError('validation') listing all violations at once. */
export const validateNewListing = (sellerAccountId: number, draft: ListingDraft): ValidNewListing => {
  const result = newListingSchema.safeParse({ ...draft, sellerAccountId });
  if (result.success) return result.data;
  throw invalidListing(result.error.issues.map(violationOf));
};

/** Units in stock as a seller sets them: 0 (sold out) up to the largest lot. */
const stockQuantity = z
  .int({ error: 'must be a whole number' })
  .min(0, 'must be at least 0')
  .max(LISTING_LIMITS.maxQuantity, `must be at most ${LISTING_LIMITS.maxQuantity}`);

/** What may change after publishing (ListingChanges): the rules of creation, each field optional. */
const listingChangesSchema = z.object({
  name: requiredText(LISTING_LIMITS.nameMaxLength).optional(),
  description: requiredText(LISTING_LIMITS.descriptionMaxLength).optional(),
  sku: optionalText(LISTING_LIMITS.skuMaxLength),
  category: category.optional(),
  condition: condition.optional(),
  priceCents: cents.optional(),
  minOrderQuantity: units.optional(),
  minQuoteQuantity: units.optional(),
  brand: optionalText(LISTING_LIMITS.brandMaxLength),
  originalRetailPriceCents: cents.optional(),
  instantCheckout: z.boolean().optional(),
  promotePublicly: z.boolean().optional(),
  // As the quantity endpoint sets it: 0 marks the listing sold out.
  quantity: stockQuantity.optional(),
  imageUrl: imageUrl.optional(),
  galleryImageUrls: z
    .array(imageUrl)
    .refine((urls) => urls.length <= LISTING_LIMITS.galleryMaxItems, {
      message: `must have at most ${LISTING_LIMITS.galleryMaxItems} items`,
    })
    .optional(),
  shipping: shippingTerms.optional(),
});

export type ValidListingChanges = z.output<typeof listingChangesSchema>;

const invalidListing = (violations: readonly FieldViolation[]): AppError =>
  validationError(
    `invalid listing: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
    violations,
  );

/**
 * Checks a seller's changes against the rules of docs/specification.md, "Listings" and against the listing they change: a minimum
 * order quantity may not exceed the units in stock (unless the lot is sold out, when any minimum is moot).
 * Throws AppError('validation') listing every violation at once.
 */
export const validateListingChanges = (
  current: { readonly quantity: number },
  changes: ListingChanges,
): ValidListingChanges => {
  const result = listingChangesSchema.safeParse(changes);
  const violations = result.success ? [] : result.error.issues.map(violationOf);
  // Checked on its own, so the seller hears about it in the same answer as any other field's problem.
  // Against the stock sent with it, if a valid one was, else the stock there is.
  const { minOrderQuantity } = changes;
  const wellFormed = minOrderQuantity !== undefined && units.safeParse(minOrderQuantity).success;
  const stock =
    changes.quantity !== undefined && stockQuantity.safeParse(changes.quantity).success
      ? changes.quantity
      : current.quantity;
  if (wellFormed && stock > 0 && minOrderQuantity > stock) {
    violations.push({
      path: 'minOrderQuantity',
      message: `must not exceed the ${stock} units in stock`,
    });
  }
  if (!result.success || violations.length > 0) throw invalidListing(violations);
  return result.data;
};

export const validateStockQuantity = (quantity: number): number => {
  const result = stockQuantity.safeParse(quantity);
  if (result.success) return result.data;
  throw invalidListing(result.error.issues.map(({ message }) => ({ path: 'quantity', message })));
};

const shipFromRegion = requiredText(SHIP_FROM_REGION_MAX_LENGTH);

/**
 * Freight terms (docs/specification.md, "Checkout and orders": freight): flat_per_order and per_unit take
 * `cents`, buyer_pickup takes `shipFromRegion`; a field the mode does not use is refused, not ignored. Paths
 * are the fields of the terms (`cents`); the caller places them (`shipping/cents` within a listing).
 */
const checkShipping = (
  draft: ShippingDraft,
): { readonly shipping: ListingShipping } | { readonly violations: FieldViolation[] } => {
  const violations: FieldViolation[] = [];
  const { mode } = draft;
  if (!(SHIPPING_MODES as readonly string[]).includes(mode)) {
    return { violations: [{ path: 'mode', message: `must be one of ${SHIPPING_MODES.join(', ')}` }] };
  }
  const takesCents = mode === 'flat_per_order' || mode === 'per_unit';
  const takesRegion = mode === 'buyer_pickup';
  let amount = 0;
  if (takesCents) {
    const result = cents.safeParse(draft.cents);
    if (draft.cents === undefined) violations.push({ path: 'cents', message: `is required for ${mode}` });
    else if (result.success) amount = result.data;
    else violations.push(...result.error.issues.map(({ message }) => ({ path: 'cents', message })));
  } else if (draft.cents !== undefined) {
    violations.push({ path: 'cents', message: `is not used by ${mode}` });
  }
  let region = '';
  if (takesRegion) {
    const result = shipFromRegion.safeParse(draft.shipFromRegion ?? '');
    if (result.success) region = result.data;
    else violations.push(...result.error.issues.map(({ message }) => ({ path: 'shipFromRegion', message })));
  } else if (draft.shipFromRegion !== undefined && draft.shipFromRegion !== '') {
    violations.push({ path: 'shipFromRegion', message: `is not used by ${mode}` });
  }
  if (violations.length > 0) return { violations };
  switch (mode) {
    case 'flat_per_order':
    case 'per_unit':
      return { shipping: { mode, cents: amount } };
    case 'buyer_pickup':
      return { shipping: { mode, shipFromRegion: region } };
    default:
      return { shipping: { mode: mode as 'included' | 'quoted_on_request' } };
  }
};

/** The freight terms of SetListingShipping; throws AppError('validation') naming each field. */
export const validateShipping = (draft: ShippingDraft): ListingShipping => {
  const checked = checkShipping(draft);
  if ('violations' in checked) throw invalidListing(checked.violations);
  return checked.shipping;
};

/** A price may at most grow elevenfold in one step: a larger "increase" is far likelier a typo. */
const MAX_PERCENT_INCREASE = 1_000;

const bulkValueRules: Record<BulkUpdateMode, z.ZodType<number>> = {
  price_set: cents,
  price_percent_increase: z
    .number()
    .positive('must be greater than 0')
    .max(MAX_PERCENT_INCREASE, `must be at most ${MAX_PERCENT_INCREASE}`),
  price_percent_decrease: z.number().positive('must be greater than 0').lt(100, 'must be less than 100'),
  moq_set: units,
};

/** Checks the value of a bulk update against its mode; throws AppError('validation') on `value`. */
export const checkBulkValue = (mode: BulkUpdateMode, value: number): void => {
  const result = bulkValueRules[mode].safeParse(value);
  if (!result.success) {
    throw invalidListing(result.error.issues.map(({ message }) => ({ path: 'value', message })));
  }
};

/**
 * What one bulk update changes on one listing. Percentages round half up to whole cents; a price that would
 * round to nothing is left to the price rule to refuse.
 */
export const bulkChangesOf = (
  mode: BulkUpdateMode,
  value: number,
  listing: { readonly priceCents: number },
): ListingChanges => {
  switch (mode) {
    case 'price_set':
      return { priceCents: value };
    case 'price_percent_increase':
      return { priceCents: Math.round((listing.priceCents * (100 + value)) / 100) };
    case 'price_percent_decrease':
      return { priceCents: Math.round((listing.priceCents * (100 - value)) / 100) };
    case 'moq_set':
      return { minOrderQuantity: value };
  }
};

/**
 * The sku of a listing whose seller sent none: derived from the product number, so deciding stays
 * deterministic. Skus are never unique-checked (docs/specification.md, "Listings"): a seller's own sku may equal a generated one.
 */
export const generatedSku = (productId: string): string => {
  const productNumber = parseProductId(productId);
  if (productNumber === undefined) throw new TypeError(`not a product id: ${productId}`);
  return `SKU-${productNumber}`;
};
