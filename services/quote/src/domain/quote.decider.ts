import type { Decider } from '@marketplace/eventsourcing';
import { conflict, notFound } from '@marketplace/platform';
import { QUOTE_LIMITS } from '@marketplace/vocabulary';
import type { QuoteNegotiationState } from '@marketplace/vocabulary';
import type {
  ClaimQuote,
  RequestQuote,
  QuoteCommand,
  RespondToCounterOffer,
  RespondToQuote,
} from './quote.commands.js';
import type {
  QuoteBuyerResponded,
  QuoteClaimed,
  QuoteEvent,
  QuoteRequest,
  QuoteRequested,
  QuoteResponded,
  QuoteStep,
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
          ...(valid.shippingDestination === undefined
            ? {}
            : { shippingDestination: valid.shippingDestination }),
          status: 'pending',
          exceedsAvailableStock: valid.quantity > product.availableQuantity,
          createdAt: now,
          updatedAt: now,
        },
      },
    },
  ];
};

/** Where the negotiation stands (docs/specification.md, "Quotes"). */
export const negotiationStateOf = (quote: QuoteRequest): QuoteNegotiationState => {
  if (quote.status === 'pending') return 'awaiting_seller';
  if (quote.agreedUnitPriceCents === undefined) return 'declined';
  const last = quote.history?.at(-1);
  const lastAction = last?.action ?? quote.response?.action;
  const lastParty = last?.party ?? 'seller';
  return lastAction === 'counter' && lastParty === 'seller' ? 'awaiting_buyer' : 'agreed';
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** A long negotiation ends: past the limit, only accept or decline. */
const checkStepsLeft = (quote: QuoteRequest, action: string): void => {
  if (action === 'counter' && (quote.history?.length ?? 0) >= QUOTE_LIMITS.maxNegotiationSteps) {
    throw conflict(
      `quote request ${quote.quoteRequestId} reached ${QUOTE_LIMITS.maxNegotiationSteps} steps: accept or ` +
        'decline the open offer',
    );
  }
};

/** A counter-offer of the other side that expired cannot be accepted or countered any more. */
const checkOfferOpen = (quote: QuoteRequest, now: number, whose: string): void => {
  if (quote.offerExpiresAt !== undefined && quote.offerExpiresAt <= now) {
    throw conflict(
      `the ${whose} offer on quote request ${quote.quoteRequestId} expired at ${iso(quote.offerExpiresAt)}`,
    );
  }
};

const WAITING: Record<QuoteNegotiationState, string> = {
  awaiting_seller: "waits for the seller's answer",
  awaiting_buyer: "waits for the buyer's answer to the seller's counter-offer",
  agreed: 'has an agreed price',
  declined: 'was declined',
};

/**
 * The seller answers the request, or the buyer's counter-offer: accept (the buyer's counter price, else the
 * target price, else the listed price), counter, or decline. Only when it is the seller's turn.
 */
const respondToQuote = (command: RespondToQuote, state: QuoteState): QuoteResponded[] => {
  const { quoteRequestId, sellerAccountId, draft } = command.data;
  // Another seller's request is as unknown as a missing one: its existence is none of the caller's business.
  if (state.status === 'absent' || state.quoteRequest.product.sellerAccountId !== sellerAccountId) {
    throw notFound(`quote request ${quoteRequestId} not found`);
  }
  const { quoteRequest } = state;
  const { now } = command.metadata;
  if (quoteRequest.status === 'responded') {
    const answered = iso(quoteRequest.response?.respondedAt ?? quoteRequest.updatedAt);
    throw conflict(
      `quote request ${quoteRequestId} was already answered (${quoteRequest.response?.action ?? 'responded'} ` +
        `at ${answered}) and ${WAITING[negotiationStateOf(quoteRequest)]}; the seller answers once per turn`,
    );
  }
  const valid = validateQuoteResponse(draft);
  const history = quoteRequest.history ?? [];
  const last = history.at(-1);
  const buyerCounter = last?.party === 'buyer' && last.action === 'counter' ? last : undefined;
  if (buyerCounter) checkOfferOpen(quoteRequest, now, "buyer's");
  checkStepsLeft(quoteRequest, valid.action);
  const agreedUnitPriceCents =
    valid.action === 'counter'
      ? valid.counterPriceCents
      : valid.action === 'accept'
        ? (buyerCounter?.priceCents ?? quoteRequest.targetPriceCents ?? quoteRequest.product.unitPriceCents)
        : undefined;
  const offerExpiresAt = agreedUnitPriceCents === undefined ? undefined : now + QUOTE_LIMITS.offerValidityMs;
  const step: QuoteStep = {
    party: 'seller',
    action: valid.action,
    priceCents: agreedUnitPriceCents,
    message: valid.message,
    at: now,
    expiresAt: valid.action === 'counter' ? offerExpiresAt : undefined,
    byAccountId: sellerAccountId,
  };
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
          offerExpiresAt,
          history: [...history, step],
          updatedAt: now,
        },
      },
    },
  ];
};

/**
 * The buyer answers the seller's open counter-offer: accept (the price is agreed, a week to buy), counter (the
 * seller's turn again, nothing buyable meanwhile) or decline. Only the owning account, only on its turn.
 */
const respondToCounterOffer = (command: RespondToCounterOffer, state: QuoteState): QuoteBuyerResponded[] => {
  const { quoteRequestId, buyerAccountId, draft } = command.data;
  if (state.status === 'absent' || state.quoteRequest.buyerAccountId !== buyerAccountId) {
    throw notFound(`quote request ${quoteRequestId} not found`);
  }
  const { quoteRequest } = state;
  const { now } = command.metadata;
  const stage = negotiationStateOf(quoteRequest);
  if (stage !== 'awaiting_buyer') {
    throw conflict(
      `quote request ${quoteRequestId} ${WAITING[stage]}; there is no counter-offer of the seller to answer`,
    );
  }
  checkOfferOpen(quoteRequest, now, "seller's");
  const valid = validateQuoteResponse(draft);
  checkStepsLeft(quoteRequest, valid.action);
  const history = quoteRequest.history ?? [];
  const expiresAt = valid.action === 'decline' ? undefined : now + QUOTE_LIMITS.offerValidityMs;
  const step: QuoteStep = {
    party: 'buyer',
    action: valid.action,
    priceCents:
      valid.action === 'counter'
        ? valid.counterPriceCents
        : valid.action === 'accept'
          ? quoteRequest.agreedUnitPriceCents
          : undefined,
    message: valid.message,
    at: now,
    expiresAt: valid.action === 'counter' ? expiresAt : undefined,
    byAccountId: buyerAccountId,
  };
  return [
    {
      type: 'QuoteBuyerResponded',
      data: {
        quoteRequest: {
          ...quoteRequest,
          // A buyer counter puts the request back in the seller's pending list.
          status: valid.action === 'counter' ? 'pending' : 'responded',
          agreedUnitPriceCents: valid.action === 'accept' ? quoteRequest.agreedUnitPriceCents : undefined,
          offerExpiresAt: expiresAt,
          history: [...history, step],
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
      case 'RespondToCounterOffer':
        return respondToCounterOffer(command, state);
    }
  },
  // Every event carries the whole request, so the newest is the state.
  evolve: (_state, event) => ({ status: 'requested', quoteRequest: event.data.quoteRequest }),
  initialState: () => ({ status: 'absent' }),
};
