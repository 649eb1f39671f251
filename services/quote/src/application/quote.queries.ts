import { notFound, validationError } from '@marketplace/platform';
import type { QuoteStatusFilter } from '@marketplace/vocabulary';
import { QUOTE_STATUS_FILTERS } from '@marketplace/vocabulary';
import type { QuoteDependencies } from './quote.dependencies.js';
import type { StoredQuote } from './request-quote.js';

export const QUOTE_LIST_LIMITS = { defaultLimit: 50, maxLimit: 200 } as const;

export interface ListQuoteRequestsInput {
  readonly sellerAccountId: number;
  /** Empty: pending (spec 4.3's default). */
  readonly status: string;
  /** 0: the default. */
  readonly limit: number;
  readonly createdSince?: number;
}

const isStatusFilter = (status: string): status is QuoteStatusFilter =>
  (QUOTE_STATUS_FILTERS as readonly string[]).includes(status);

/** The seller's own requests, newest first; never another seller's. */
export const listQuoteRequests = async (
  deps: Pick<QuoteDependencies, 'db' | 'quoteRequests'>,
  input: ListQuoteRequestsInput,
): Promise<{ quoteRequests: StoredQuote[]; total: number }> => {
  const status = input.status === '' ? 'pending' : input.status;
  const limit = input.limit === 0 ? QUOTE_LIST_LIMITS.defaultLimit : input.limit;
  const violations = [
    ...(isStatusFilter(status)
      ? []
      : [{ path: 'status', message: `must be one of ${QUOTE_STATUS_FILTERS.join(', ')}` }]),
    ...(Number.isInteger(limit) && limit >= 1 && limit <= QUOTE_LIST_LIMITS.maxLimit
      ? []
      : [{ path: 'limit', message: `must be a whole number from 1 to ${QUOTE_LIST_LIMITS.maxLimit}` }]),
  ];
  if (violations.length > 0 || !isStatusFilter(status)) {
    throw validationError(
      `invalid quote request filter: ${violations.map((v) => `${v.path} ${v.message}`).join('; ')}`,
      violations,
    );
  }
  return deps.quoteRequests.list(deps.db, {
    sellerAccountId: input.sellerAccountId,
    status,
    limit,
    createdSince: input.createdSince,
  });
};

/** One request whoever owns it: for services, which check the caller themselves. */
export const getQuoteRequest = async (
  deps: Pick<QuoteDependencies, 'db' | 'quoteRequests'>,
  quoteRequestId: number,
): Promise<StoredQuote> => {
  const stored = await deps.quoteRequests.find(deps.db, quoteRequestId);
  if (stored === undefined) throw notFound(`quote request ${quoteRequestId} not found`);
  return stored;
};

export const countQuoteRequestsSince = (
  deps: Pick<QuoteDependencies, 'db' | 'quoteRequests'>,
  since: number,
): Promise<number> => deps.quoteRequests.countSince(deps.db, since);
