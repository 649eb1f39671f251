import type { FieldViolation } from '@marketplace/platform';
import { validationError } from '@marketplace/platform';
import { CATEGORIES } from '@marketplace/vocabulary';

/** A listing in stock is `active`, one at 0 units `sold_out` (docs/specification.md, "Checkout and orders"), one its seller withdrew `withdrawn`. */
export const LISTING_STATUSES = ['active', 'sold_out', 'withdrawn'] as const;
export type ListingStatus = (typeof LISTING_STATUSES)[number];

/** `public`: promoted to the agent-facing surfaces; `private`: in-app only (docs/specification.md, "Service"). */
export const LISTING_VISIBILITIES = ['public', 'private'] as const;
export type ListingVisibility = (typeof LISTING_VISIBILITIES)[number];

export const SELLER_LISTINGS_MAX_LIMIT = 200;

/** Where a page ends: the last listing's change time and product number (the order of the list). */
export interface SellerListingsCursor {
  readonly updatedAt: number;
  readonly productNumber: number;
}

export interface SellerListingsQuery {
  readonly sellerAccountId: number;
  readonly status?: ListingStatus;
  readonly visibility?: ListingVisibility;
  readonly category?: string;
  readonly sku?: string;
  readonly updatedSince?: number;
  readonly after?: SellerListingsCursor;
  readonly limit: number;
}

export interface SellerListingsFilter {
  readonly status: string;
  readonly visibility: string;
  readonly category: string;
  readonly sku: string;
  readonly updatedSince?: number | undefined;
  readonly cursor: string;
  readonly limit: number;
}

export const statusOf = (listing: {
  readonly quantity: number;
  readonly withdrawnAt?: number | undefined;
}): ListingStatus => {
  if (listing.withdrawnAt !== undefined) return 'withdrawn';
  return listing.quantity > 0 ? 'active' : 'sold_out';
};

/** Opaque to clients: base64url of `<updatedAt>.<productNumber>`. */
export const encodeCursor = (cursor: SellerListingsCursor): string =>
  Buffer.from(`${cursor.updatedAt}.${cursor.productNumber}`).toString('base64url');

const decodeCursor = (cursor: string): SellerListingsCursor | undefined => {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (match === null) return undefined;
  return { updatedAt: Number(match[1]), productNumber: Number(match[2]) };
};

const oneOf = <T extends string>(values: readonly T[], value: string): value is T =>
  (values as readonly string[]).includes(value);

/**
 * Checks a seller's list filters (empty strings: not given); throws AppError('validation') naming every bad
 * field at once.
 */
export const sellerListingsQueryOf = (
  sellerAccountId: number,
  filter: SellerListingsFilter,
): SellerListingsQuery => {
  const violations: FieldViolation[] = [];
  const { status, visibility, category, sku, cursor, limit, updatedSince } = filter;
  if (status !== '' && !oneOf(LISTING_STATUSES, status)) {
    violations.push({ path: 'status', message: `must be one of ${LISTING_STATUSES.join(', ')}` });
  }
  if (visibility !== '' && !oneOf(LISTING_VISIBILITIES, visibility)) {
    violations.push({ path: 'visibility', message: `must be one of ${LISTING_VISIBILITIES.join(', ')}` });
  }
  if (category !== '' && !oneOf(CATEGORIES, category)) {
    violations.push({ path: 'category', message: `must be one of ${CATEGORIES.join(', ')}` });
  }
  const after = cursor === '' ? undefined : decodeCursor(cursor);
  if (cursor !== '' && after === undefined) {
    violations.push({ path: 'cursor', message: 'is not a cursor this list returned' });
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > SELLER_LISTINGS_MAX_LIMIT) {
    violations.push({
      path: 'limit',
      message: `must be a whole number from 1 to ${SELLER_LISTINGS_MAX_LIMIT}`,
    });
  }
  if (updatedSince !== undefined && (!Number.isSafeInteger(updatedSince) || updatedSince < 0)) {
    violations.push({ path: 'updatedSince', message: 'must be a time after 1970' });
  }
  if (violations.length > 0) {
    throw validationError(
      `invalid listing filter: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
      violations,
    );
  }
  return {
    sellerAccountId,
    ...(status === '' ? {} : { status: status as ListingStatus }),
    ...(visibility === '' ? {} : { visibility: visibility as ListingVisibility }),
    ...(category === '' ? {} : { category }),
    // Skus are stored trimmed (listing.rules), so the filter is too: ' A-1 ' finds the listing of A-1.
    ...(sku.trim() === '' ? {} : { sku: sku.trim() }),
    ...(updatedSince === undefined ? {} : { updatedSince }),
    ...(after === undefined ? {} : { after }),
    limit,
  };
};
