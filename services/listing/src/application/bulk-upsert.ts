import { createHash } from 'node:crypto';
import type { Queryable, Transaction } from '@marketplace/database';
import type { CommandContext, IdempotentRequest } from '@marketplace/eventsourcing';
import { idempotencyScopeOf, idempotentRequestOf } from '@marketplace/eventsourcing';
import { AppError, isAppError, validationError } from '@marketplace/platform';
import type { BulkUpsertMode } from '@marketplace/vocabulary';
import { BULK_UPSERT_LIMITS, BULK_UPSERT_MODES } from '@marketplace/vocabulary';
import type { BulkUpsertItem, BulkUpsertOutcome, BulkUpsertStep } from '../domain/bulk-upsert.js';
import { planBulkUpsert, upsertSkuOf } from '../domain/bulk-upsert.js';
import type { ListingWriteDependencies } from './change-listing.js';
import { updateListingIfChanged } from './change-listing.js';
import type { BatchCreateDependencies, ClaimCreates } from './create-listing.js';
import { createListings, mapInPool } from './create-listing.js';
import type { ImageBudget } from './host-images.js';
import { startImageBudget } from './host-images.js';
import type {
  SellerListingRows,
  SellerListingsByProductId,
  SellerListingsStore,
} from './list-seller-listings.js';

/** The recorded answers of keyed bulk upserts (adapters/bulk-upsert-answers.table.ts). */
export interface BulkUpsertAnswers {
  /** The answer a key gave; undefined when unseen; an idempotency conflict when it was for another request. */
  find(q: Queryable, request: IdempotentRequest): Promise<BulkUpsertOutcome[] | undefined>;
  /** Records the answer, or answers the one a concurrent twin recorded first. */
  record(
    q: Queryable,
    request: IdempotentRequest,
    outcomes: readonly BulkUpsertOutcome[],
  ): Promise<BulkUpsertOutcome[]>;
}

/** Locks the seller's skus until the transaction ends (adapters/seller-sku.lock.ts). */
export type LockSellerSkus = (
  tx: Transaction,
  sellerAccountId: number,
  skus: readonly string[],
) => Promise<void>;

export type BulkUpsertDependencies = BatchCreateDependencies &
  ListingWriteDependencies & {
    readonly sellerListings: SellerListingsStore & SellerListingRows & SellerListingsByProductId;
    readonly bulkAnswers: BulkUpsertAnswers;
    readonly lockSkus: LockSellerSkus;
  };

export interface BulkUpsertInput extends CommandContext {
  readonly sellerAccountId: number;
  readonly mode: string;
  readonly items: readonly BulkUpsertItem[];
  readonly idempotencyKey?: string | undefined;
  /** The items the caller refused before sending, as a digest ('' or absent: none); bound to the key. */
  readonly refusedItemsDigest?: string | undefined;
}

/**
 * Updates run a few at a time, each in its own transaction, so the pool's other callers keep their connections;
 * their images are fetched with no transaction open, in the call's image budget (docs/specification.md, "Bulk
 * upsert").
 */
const UPDATES_AT_ONCE = 8;

const isBulkUpsertMode = (mode: string): mode is BulkUpsertMode =>
  (BULK_UPSERT_MODES as readonly string[]).includes(mode);

const checkRequest = (input: BulkUpsertInput): BulkUpsertMode => {
  const violations = [];
  if (!isBulkUpsertMode(input.mode)) {
    violations.push({ path: 'mode', message: `must be one of ${BULK_UPSERT_MODES.join(', ')}` });
  }
  if (input.items.length < 1 || input.items.length > BULK_UPSERT_LIMITS.maxItems) {
    violations.push({ path: 'items', message: `must hold 1 to ${BULK_UPSERT_LIMITS.maxItems} items` });
  }
  if (violations.length > 0 || !isBulkUpsertMode(input.mode)) {
    throw validationError('invalid bulk upsert', violations);
  }
  return input.mode;
};

/**
 * The key of one created item: derived from the call's key, so a retried or concurrent call creates each item at
 * most once (the keys of single creates do the work), and short enough for any client key.
 */
const itemKeyOf = (key: string, index: number): string =>
  `bulk-${createHash('sha256').update(key).digest('hex').slice(0, 40)}-${index}`;

const outcomeOfError = (index: number, error: unknown): BulkUpsertOutcome => {
  if (!isAppError(error) || error.kind === 'unavailable') throw error;
  return { index, status: 'error', message: error.message, violations: error.violations };
};

/** An update runs alone: under its listing's lock, in its own transaction (a sync's updates are few). */
const runUpdate = async (
  deps: BulkUpsertDependencies,
  input: BulkUpsertInput,
  step: Extract<BulkUpsertStep, { kind: 'update' }>,
  imageBudget: ImageBudget,
): Promise<BulkUpsertOutcome> => {
  const { index } = step;
  try {
    const { listing, version, changed } = await updateListingIfChanged(deps, {
      actor: input.actor,
      correlationId: input.correlationId,
      traceparent: input.traceparent,
      sellerAccountId: input.sellerAccountId,
      productId: step.productId,
      changes: step.changes,
      imageBudget,
    });
    return { index, status: changed ? 'updated' : 'unchanged', productId: listing.productId, version };
  } catch (error) {
    return outcomeOfError(index, error);
  }
};

/**
 * In `upsert_by_sku`, a create claims its sku in its transaction: the skus locked, an item whose sku a listing of
 * the seller holds by now (a concurrent call created it since the lookup) is refused, not created a twin that
 * would make the sku ambiguous for every later upsert.
 */
const claimSkus =
  (deps: BulkUpsertDependencies, sellerAccountId: number): ClaimCreates =>
  async (tx, items) => {
    const skuOf = new Map(items.map(({ index, draft }) => [index, upsertSkuOf(draft) ?? '']));
    const skus = [...new Set(skuOf.values())];
    await deps.lockSkus(tx, sellerAccountId, skus);
    const existing = await deps.sellerListings.bySkus(tx, sellerAccountId, skus);
    const refused = new Map<number, unknown>();
    for (const [index, sku] of skuOf) {
      if (!existing.has(sku)) continue;
      const message =
        'was created by another call of yours while this one ran: send the item again to update it';
      refused.set(index, new AppError('conflict', `sku ${message}`, [{ path: 'sku', message }]));
    }
    return refused;
  };

/** The creates of the request, decided together and appended a group per transaction (`createListings`). */
const runCreates = async (
  deps: BulkUpsertDependencies,
  input: BulkUpsertInput,
  mode: BulkUpsertMode,
  steps: readonly Extract<BulkUpsertStep, { kind: 'create' }>[],
  imageBudget: ImageBudget,
): Promise<BulkUpsertOutcome[]> => {
  if (steps.length === 0) return [];
  const created = await createListings(deps, {
    imageBudget,
    ...(mode === 'upsert_by_sku' ? { claim: claimSkus(deps, input.sellerAccountId) } : {}),
    sellerAccountId: input.sellerAccountId,
    actor: input.actor,
    correlationId: input.correlationId,
    traceparent: input.traceparent,
    items: steps.map(({ index, draft }) => ({
      index,
      draft,
      idempotencyKey: input.idempotencyKey === undefined ? undefined : itemKeyOf(input.idempotencyKey, index),
    })),
  });
  return created.map((outcome): BulkUpsertOutcome => {
    if ('error' in outcome) return outcomeOfError(outcome.index, outcome.error);
    const { listing, version } = outcome.created;
    return { index: outcome.index, status: 'created', productId: listing.productId, version };
  });
};

/**
 * Creates or updates up to 1,000 of the seller's listings (docs/specification.md, "Bulk upsert"). The request
 * as a whole is checked first (400 for a bad mode or item count); then each item is created, updated, left
 * unchanged or refused on its own, so one bad item never fails the others: the creates are decided together and
 * appended a group per transaction (`createListings`), each update in its own transaction.
 * With an idempotency key, a repeat answers what the first call answered and writes nothing.
 */
export const bulkUpsertListings = async (
  deps: BulkUpsertDependencies,
  input: BulkUpsertInput,
): Promise<BulkUpsertOutcome[]> => {
  const mode = checkRequest(input);
  const keyed = idempotentRequestOf(input.idempotencyKey, {
    path: 'idempotency_key',
    scope: idempotencyScopeOf({ accountId: input.sellerAccountId }),
    operation: 'BulkUpsertListings',
    request: {
      sellerAccountId: input.sellerAccountId,
      mode,
      items: input.items,
      // Only when there are some, so a key recorded for a call without refused items keeps its request hash.
      ...(input.refusedItemsDigest ? { refusedItems: input.refusedItemsDigest } : {}),
    },
  });
  const earlier = keyed === undefined ? undefined : await deps.bulkAnswers.find(deps.db, keyed);
  if (earlier !== undefined) return earlier;
  const skus =
    mode === 'upsert_by_sku'
      ? [...new Set(input.items.flatMap(({ draft }) => upsertSkuOf(draft) ?? []))]
      : [];
  const existing = await deps.sellerListings.bySkus(deps.db, input.sellerAccountId, skus);
  const steps = planBulkUpsert(mode, input.items, existing);
  const refused = steps.flatMap((step): BulkUpsertOutcome[] =>
    step.kind === 'refused'
      ? [{ index: step.index, status: 'error', message: 'invalid item', violations: step.violations }]
      : [],
  );
  // One budget for the whole call: its creates and updates share the fetches at once and the time for images.
  const imageBudget = startImageBudget(deps.images);
  const [created, updated] = await Promise.all([
    runCreates(
      deps,
      input,
      mode,
      steps.filter((step) => step.kind === 'create'),
      imageBudget,
    ),
    mapInPool(
      steps.filter((step) => step.kind === 'update'),
      UPDATES_AT_ONCE,
      (step) => runUpdate(deps, input, step, imageBudget),
    ),
  ]);
  const outcomes = [...refused, ...created, ...updated].sort((a, b) => a.index - b.index);
  return keyed === undefined ? outcomes : deps.bulkAnswers.record(deps.db, keyed, outcomes);
};
