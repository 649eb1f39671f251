import type { Decider } from '@marketplace/eventsourcing';
import { conflict, notFound } from '@marketplace/platform';
import { QUOTE_LIMITS } from '@marketplace/vocabulary';
import type { ClaimQuote, RequestQuote, QuoteCommand, RespondToQuote } from './quote.commands.js';
import type {
  QuoteClaimed,
  QuoteEvent,
  QuoteRequest,
  QuoteRequested,
  QuoteResponded,
} from './quote.events.js';
import { validateQuoteRequest, validateQuoteResponse } from './quote.rules.js';

export type QuoteState =
  { readonly status: 'absent' } | { readonly status: 'requested'; readonly quoteRequest: QuoteRequest };

const requestQuote = (command: RequestQuote, state: QuoteState): QuoteRequested[] => {
  const { quoteRequestId, product, buyerAccountId, draft } = command.data;
  if (state.status !== 'absent') throw conflict(`quote request ${quoteRequestId} already exists`);
  const valid = validateQuoteRequest(draft);
  const { now } = command.metadata;
  return [
    {
      type: 'QuoteRequested',
      data: {
        quoteRequest: {
          quoteRequestId,
          product,
          quantity: valid.quantity,
          buyer: valid.buyer,
          buyerAccountId,
          targetPriceCents: valid.targetPriceCents,
          message: valid.message,
          status: 'pending',
          exceedsAvailableStock: valid.quantity > product.availableQuantity,
          createdAt: now,
          updatedAt: now,
        },
      },
    },
  ];
};

const respondToQuote = (command: RespondToQuote, state: QuoteState): QuoteResponded[] => {
  const { quoteRequestId, sellerAccountId, draft } = command.data;
  // Another seller's request is as unknown as a missing one: its existence is none of the caller's business.
  if (state.status === 'absent' || state.quoteRequest.product.sellerAccountId !== sellerAccountId) {
    throw notFound(`quote request ${quoteRequestId} not found`);
  }
  const { quoteRequest } = state;
  if (quoteRequest.status === 'responded') {
    const answered = new Date(quoteRequest.response?.respondedAt ?? quoteRequest.updatedAt).toISOString();
    throw conflict(
      `quote request ${quoteRequestId} was already answered (${quoteRequest.response?.action ?? 'responded'} ` +
        `at ${answered}); a quote request is answered once`,
    );
  }
  const valid = validateQuoteResponse(draft);
  const { now } = command.metadata;
  const agreedUnitPriceCents =
    valid.action === 'counter'
      ? valid.counterPriceCents
      : valid.action === 'accept'
        ? (quoteRequest.targetPriceCents ?? quoteRequest.product.unitPriceCents)
        : undefined;
  return [
    {
      type: 'QuoteResponded',
      data: {
        quoteRequest: {
          ...quoteRequest,
          status: 'responded',
          response: {
            action: valid.action,
            counterPriceCents: valid.counterPriceCents,
            message: valid.message,
            respondedAt: now,
            respondedByAccountId: sellerAccountId,
          },
          agreedUnitPriceCents,
          offerExpiresAt: agreedUnitPriceCents === undefined ? undefined : now + QUOTE_LIMITS.offerValidityMs,
          updatedAt: now,
        },
      },
    },
  ];
};

/**
 * Ownership of an anonymous request moves to the account that holds its claim token (docs/specification.md,
 * "Quotes"). A wrong token reads like an unknown request; claiming one's own again changes nothing.
 */
const claimQuote = (command: ClaimQuote, state: QuoteState): QuoteClaimed[] => {
  const { quoteRequestId, buyerAccountId, claimTokenMatches } = command.data;
  if (state.status === 'absent' || !claimTokenMatches) {
    throw notFound(`quote request ${quoteRequestId} not found, or the claim token is not its own`);
  }
  const { quoteRequest } = state;
  if (quoteRequest.buyerAccountId === buyerAccountId) return [];
  if (quoteRequest.buyerAccountId !== undefined) {
    throw conflict(`quote request ${quoteRequestId} already belongs to another buyer account`);
  }
  const { now } = command.metadata;
  return [
    {
      type: 'QuoteClaimed',
      data: { quoteRequest: { ...quoteRequest, buyerAccountId, claimedAt: now, updatedAt: now } },
    },
  ];
};

export const quoteDecider: Decider<QuoteCommand, QuoteEvent, QuoteState> = {
  decide: (command, state) => {
    switch (command.type) {
      case 'RequestQuote':
        return requestQuote(command, state);
      case 'RespondToQuote':
        return respondToQuote(command, state);
      case 'ClaimQuote':
        return claimQuote(command, state);
    }
  },
  // Every event carries the whole request, so the newest is the state.
  evolve: (_state, event) => ({ status: 'requested', quoteRequest: event.data.quoteRequest }),
  initialState: () => ({ status: 'absent' }),
};
