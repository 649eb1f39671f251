import { createHash } from 'node:crypto';
import { z } from 'zod';
import { listingV1 } from '@marketplace/proto';
import type { FieldViolation } from '@marketplace/platform';
import { unstorableTextViolations } from '@marketplace/platform';
import { BULK_UPSERT_LIMITS, BULK_UPSERT_MODES } from '@marketplace/vocabulary';
import type { BulkUpsertMode } from '@marketplace/vocabulary';
import { violationsOf } from '../../edge/schemas/validate.js';
import type { CreateListingBody } from './create-listing.schema.js';
import { createListingBodySchema } from './create-listing.schema.js';

/**
 * POST /api/products/bulk and bulk_upsert_listings (docs/specification.md, "Bulk upsert"). The envelope is
 * checked as a whole; each item is checked on its own against the body of POST /api/products, so one bad item
 * is reported in its result and the others go on to the listing service.
 */
export const bulkUpsertBodySchema = z.strictObject({
  mode: z
    .enum(BULK_UPSERT_MODES, { error: `must be one of ${BULK_UPSERT_MODES.join(', ')}` })
    .describe(
      'create: every item is a new listing; upsert_by_sku: an item updates your listing with its sku',
    ),
  items: z
    .array(z.unknown())
    .min(1, 'must hold at least 1 item')
    .max(BULK_UPSERT_LIMITS.maxItems, `must hold at most ${BULK_UPSERT_LIMITS.maxItems} items`)
    .describe('each the body of POST /api/products; checked one by one'),
});

/** The same envelope with each item's shape spelt out, for /openapi.json. */
export const bulkUpsertBodyDoc = bulkUpsertBodySchema.extend({
  items: z.array(createListingBodySchema).min(1).max(BULK_UPSERT_LIMITS.maxItems),
});

const BULK_STATUSES = ['created', 'updated', 'unchanged', 'error'] as const;
type BulkStatus = (typeof BULK_STATUSES)[number];

export const bulkUpsertOutput = z.object({
  results: z
    .array(
      z.object({
        index: z.number().int().describe('the item’s place in items, from 0'),
        status: z.enum(BULK_STATUSES),
        product_id: z.string().optional().describe('created, updated or unchanged: the listing'),
        version: z.number().int().optional().describe('its version, the ETag for If-Match'),
        message: z.string().optional().describe('error: what is wrong'),
        errors: z
          .array(z.object({ field: z.string(), message: z.string() }))
          .optional()
          .describe('error: each field at fault, as the body of POST /api/products names it'),
      }),
    )
    .describe('one per item, in the order sent'),
  summary: z.object({
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    error: z.number().int(),
  }),
});
export type BulkUpsertAnswer = z.output<typeof bulkUpsertOutput>;
type BulkResult = BulkUpsertAnswer['results'][number];

/** The REST body's field names to the draft's, where they differ (dollars become cents). */
const DRAFT_FIELD_OF: Partial<Record<keyof CreateListingBody, keyof listingV1.ListingDraft>> = {
  price: 'priceCents',
  originalRetailPrice: 'originalRetailPriceCents',
};

const MODES: Record<BulkUpsertMode, listingV1.BulkUpsertMode> = {
  create: listingV1.BulkUpsertMode.BULK_UPSERT_MODE_CREATE,
  upsert_by_sku: listingV1.BulkUpsertMode.BULK_UPSERT_MODE_UPSERT_BY_SKU,
};

const STATUS_OF: Partial<Record<listingV1.BulkUpsertStatus, BulkStatus>> = {
  [listingV1.BulkUpsertStatus.BULK_UPSERT_STATUS_CREATED]: 'created',
  [listingV1.BulkUpsertStatus.BULK_UPSERT_STATUS_UPDATED]: 'updated',
  [listingV1.BulkUpsertStatus.BULK_UPSERT_STATUS_UNCHANGED]: 'unchanged',
  [listingV1.BulkUpsertStatus.BULK_UPSERT_STATUS_ERROR]: 'error',
};

const refusedResult = (index: number, violations: readonly FieldViolation[]): BulkResult => ({
  index,
  status: 'error',
  message: 'invalid item',
  errors: violations.map(({ path, message }) => ({ field: path, message })),
});

/**
 * Splits the items into those the listing service is sent (with the fields each sent, so an update keeps the
 * others) and those refused here with their violations. Text PostgreSQL cannot store (a NUL, a lone surrogate)
 * is checked here, item by item, not for the whole body: one bad item never fails the others
 * (docs/specification.md, "Bulk upsert"; docs/security.md, "Hostile input").
 */
export const bulkItemsOf = (
  items: readonly unknown[],
  draftOf: (body: CreateListingBody) => listingV1.ListingDraft,
): { readonly sent: listingV1.BulkUpsertItem[]; readonly refused: BulkResult[] } => {
  const sent: listingV1.BulkUpsertItem[] = [];
  const refused: BulkResult[] = [];
  items.forEach((item, index) => {
    const unstorable = unstorableTextViolations(item);
    const parsed = createListingBodySchema.safeParse(item);
    if (!parsed.success || unstorable.length > 0) {
      const invalid = parsed.success ? [] : violationsOf(parsed.error);
      refused.push(refusedResult(index, [...unstorable, ...invalid]));
      return;
    }
    const fields = (Object.keys(parsed.data) as (keyof CreateListingBody)[])
      .filter((field) => parsed.data[field] != null)
      .map((field) => DRAFT_FIELD_OF[field] ?? field);
    sent.push({ index, draft: draftOf(parsed.data), fields });
  });
  return { sent, refused };
};

/**
 * The items refused here, by place and body as sent, as one digest ('' when none): the listing service binds it
 * to the idempotency key with the items it is sent, so a repeat whose refused items differ (or are left out) is
 * another body and 422, not a replay (docs/specification.md, "Bulk upsert").
 */
export const refusedItemsDigestOf = (items: readonly unknown[], refused: readonly BulkResult[]): string =>
  refused.length === 0
    ? ''
    : createHash('sha256')
        .update(JSON.stringify(refused.map(({ index }) => [index, items[index]])))
        .digest('base64url');

export const bulkModeOf = (mode: BulkUpsertMode): listingV1.BulkUpsertMode => MODES[mode];

/** The listing service's outcomes and the items refused here, as one answer in the order the items came. */
export const bulkAnswerOf = (
  outcomes: readonly listingV1.BulkUpsertOutcome[],
  refused: readonly BulkResult[],
): BulkUpsertAnswer => {
  const results: BulkResult[] = [
    ...refused,
    ...outcomes.map((outcome): BulkResult => {
      const status = STATUS_OF[outcome.status] ?? 'error';
      return status === 'error'
        ? {
            index: outcome.index,
            status,
            message: outcome.message,
            errors: outcome.violations.map(({ field, description }) => ({ field, message: description })),
          }
        : { index: outcome.index, status, product_id: outcome.productId, version: outcome.version };
    }),
  ].sort((a, b) => a.index - b.index);
  const count = (status: BulkStatus) => results.filter((result) => result.status === status).length;
  return {
    results,
    summary: {
      created: count('created'),
      updated: count('updated'),
      unchanged: count('unchanged'),
      error: count('error'),
    },
  };
};
