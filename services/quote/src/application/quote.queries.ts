import { notFound, validationError } from '@marketplace/platform';
import type { QuoteStatusFilter } from '@marketplace/vocabulary';
import { QUOTE_LIMITS, QUOTE_STATUS_FILTERS } from '@marketplace/vocabulary';
import type { QuoteDependencies } from './quote.dependencies.js';
import type { StoredQuote } from './request-quote.js';

export interface ListQuoteRequestsInput {
  readonly sellerAccountId: number;
  /** Empty: pending (docs/specification.md, "MCP tools"'s default). */
  readonly status: string;
  /** 0: the default. */
  readonly limit: number;
  readonly createdSince?: number;
}

const isStatusFilter = (status: string): status is QuoteStatusFilter =>
  (QUOTE_STATUS_FILTERS as readonly string[]).includes(status);

/**
 * A list filter, checked: `status` (empty: `defaultStatus`), `limit` (0: the default) and `offset`, every
 * violation at once.
 */
const checkedFilter = (
  input: { readonly status: string; readonly limit: number; readonly offset?: number },
  defaultStatus: QuoteStatusFilter,
): { status: QuoteStatusFilter; limit: number; offset: number } => {
  const status = input.status === '' ? defaultStatus : input.status;
  const limit = input.limit === 0 ? QUOTE_LIMITS.defaultListLimit : input.limit;
  const offset = input.offset ?? 0;
  const violations = [
    ...(isStatusFilter(status)
      ? []
      : [{ path: 'status', message: `must be one of ${QUOTE_STATUS_FILTERS.join(', ')}` }]),
    ...(Number.isInteger(limit) && limit >= 1 && limit <= QUOTE_LIMITS.maxListLimit
      ? []
      : [{ path: 'limit', message: `must be a whole number from 1 to ${QUOTE_LIMITS.maxListLimit}` }]),
    ...(Number.isInteger(offset) && offset >= 0
      ? []
      : [{ path: 'offset', message: 'must be a whole number from 0' }]),
  ];
  if (violations.length > 0 || !isStatusFilter(status)) {
    throw validationError(
      `invalid quote request filter: ${violations.map((v) => `${v.path} ${v.message}`).join('; ')}`,
      violations,
    );
  }
  return { status, limit, offset };
};

/** The seller's own requests, newest first; never another seller's. */
export const listQuoteRequests = async (
  deps: Pick<QuoteDependencies, 'db' | 'quoteRequests'>,
  input: ListQuoteRequestsInput,
): Promise<{ quoteRequests: StoredQuote[]; total: number }> => {
  const { status, limit } = checkedFilter(input, 'pending');
  return deps.quoteRequests.list(deps.db, {
    owner: { sellerAccountId: input.sellerAccountId },
    status,
    limit,
    createdSince: input.createdSince,
  });
};

export interface ListBuyerQuoteRequestsInput {
  readonly buyerAccountId: number;
  /** Empty: all. */
  readonly status: string;
  /** 0: the default. */
  readonly limit: number;
  readonly offset: number;
}

/** A buyer account's own requests (asked with its credential, or claimed), newest first. */
export const listBuyerQuoteRequests = async (
  deps: Pick<QuoteDependencies, 'db' | 'quoteRequests'>,
  input: ListBuyerQuoteRequestsInput,
): Promise<{ quoteRequests: StoredQuote[]; total: number }> =>
  deps.quoteRequests.list(deps.db, {
    owner: { buyerAccountId: input.buyerAccountId },
    ...checkedFilter(input, 'all'),
  });

/**
 * One request as its buyer sees it: the caller's account owns it, or the caller holds its claim token. Anything
 * else reads like an unknown id (docs/specification.md, "Quotes").
 */
export const getBuyerQuoteRequest = async (
  deps: Pick<QuoteDependencies, 'db' | 'quoteRequests' | 'claimTokens'>,
  input: { readonly quoteRequestId: number; readonly buyerAccountId?: number; readonly claimToken: string },
): Promise<StoredQuote> => {
  const stored = await deps.quoteRequests.find(deps.db, input.quoteRequestId);
  const owner = stored?.quoteRequest.buyerAccountId;
  const owns =
    stored !== undefined &&
    ((input.buyerAccountId !== undefined && owner === input.buyerAccountId) ||
      (owner === undefined && deps.claimTokens.matches(input.quoteRequestId, input.claimToken)));
  if (!owns) throw notFound(`quote request ${input.quoteRequestId} not found`);
  return stored;
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
