import type { FieldViolation } from '@marketplace/platform';
import type { BulkUpsertMode } from '@marketplace/vocabulary';
import type { ListingChanges, ListingDraft } from './listing.commands.js';
import type { Listing } from './listing.events.js';

/** One item of a bulk upsert: the draft POST takes, its place in the client's request and the fields it sent. */
export interface BulkUpsertItem {
  readonly index: number;
  readonly draft: ListingDraft;
  /** The draft fields the client sent: an update replaces these and keeps the others (PUT semantics). */
  readonly fields: readonly (keyof ListingDraft)[];
}

/** A listing of the seller's as the seller's list holds it. */
export interface ExistingListing {
  readonly listing: Listing;
  readonly version: number;
}

/** What one item does: decided before anything is written, from the request and the seller's listings. */
export type BulkUpsertStep =
  | { readonly kind: 'create'; readonly index: number; readonly draft: ListingDraft }
  | {
      readonly kind: 'update';
      readonly index: number;
      readonly productId: string;
      readonly changes: ListingChanges;
    }
  | { readonly kind: 'refused'; readonly index: number; readonly violations: readonly FieldViolation[] };

/** The outcome of one item, in the order of the request. */
export type BulkUpsertOutcome =
  | {
      readonly index: number;
      readonly status: 'created' | 'updated' | 'unchanged';
      readonly productId: string;
      readonly version: number;
    }
  | {
      readonly index: number;
      readonly status: 'error';
      readonly message: string;
      readonly violations: readonly FieldViolation[];
    };

const refused = (index: number, path: string, message: string): BulkUpsertStep => ({
  kind: 'refused',
  index,
  violations: [{ path, message }],
});

/**
 * The sku an item is keyed by in `upsert_by_sku`: as the listing stores it (the rules trim text, so ` A-1 ` is
 * stored as `A-1` and must find `A-1`), undefined when blank.
 */
export const upsertSkuOf = (draft: ListingDraft): string | undefined => {
  const sku = draft.sku?.trim();
  return sku === undefined || sku === '' ? undefined : sku;
};

/** The changes an item asks of an existing listing: the fields it sent, nothing else. */
const changesOf = (item: BulkUpsertItem): ListingChanges =>
  Object.fromEntries(item.fields.map((field) => [field, item.draft[field]]));

/**
 * Decides each item's step (docs/specification.md, "Bulk upsert"). In `upsert_by_sku` mode an item needs a
 * sku; the first item with a sku claims it and later ones with the same sku are refused (two writes to one
 * listing in one request would race); a sku that names several of the seller's listings is refused, since
 * which one to update cannot be told; a sku with none creates.
 */
export const planBulkUpsert = (
  mode: BulkUpsertMode,
  items: readonly BulkUpsertItem[],
  existingBySku: ReadonlyMap<string, readonly ExistingListing[]>,
): BulkUpsertStep[] => {
  if (mode === 'create') return items.map(({ index, draft }) => ({ kind: 'create', index, draft }));
  const claimedBy = new Map<string, number>();
  return items.map((item): BulkUpsertStep => {
    const sku = upsertSkuOf(item.draft);
    if (sku === undefined) return refused(item.index, 'sku', 'is required to upsert by sku');
    const earlier = claimedBy.get(sku);
    if (earlier !== undefined) {
      return refused(item.index, 'sku', `appears earlier in this request (item ${earlier}): send it once`);
    }
    claimedBy.set(sku, item.index);
    const existing = existingBySku.get(sku) ?? [];
    if (existing.length > 1) {
      return refused(
        item.index,
        'sku',
        `names ${existing.length} of your listings: update them by product id, or give each its own sku`,
      );
    }
    const [only] = existing;
    if (only === undefined) return { kind: 'create', index: item.index, draft: item.draft };
    return { kind: 'update', index: item.index, productId: only.listing.productId, changes: changesOf(item) };
  });
};
