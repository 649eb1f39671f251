import type { Command } from '@marketplace/eventsourcing';
import type { ProductSnapshot } from './quote.events.js';

/** What a buyer sends, before validation. */
export interface QuoteRequestDraft {
  readonly quantity: number;
  readonly buyer: { readonly email: string; readonly name?: string; readonly company?: string };
  readonly targetPriceCents?: number;
  readonly message?: string;
  readonly shippingDestination?: string;
}

export type RequestQuote = Command<
  'RequestQuote',
  {
    /** Allocated before deciding, from the quote id sequence. */
    readonly quoteRequestId: number;
    /** The listing as the quote service knows it; only publicly promoted listings take quote requests. */
    readonly product: ProductSnapshot;
    readonly buyerAccountId?: number;
    readonly draft: QuoteRequestDraft;
  }
>;

/** What a seller sends, before validation: the action is still a plain string. */
export interface QuoteResponseDraft {
  readonly action: string;
  readonly counterPriceCents?: number;
  readonly message?: string;
}

export type RespondToQuote = Command<
  'RespondToQuote',
  {
    readonly quoteRequestId: number;
    /** The calling seller; only the request's own seller may answer it. */
    readonly sellerAccountId: number;
    readonly draft: QuoteResponseDraft;
  }
>;

/** The buyer's answer to a seller's counter-offer. */
export type RespondToCounterOffer = Command<
  'RespondToCounterOffer',
  {
    readonly quoteRequestId: number;
    /** The calling buyer account; only the request's owner may answer. */
    readonly buyerAccountId: number;
    readonly draft: QuoteResponseDraft;
  }
>;

export type ClaimQuote = Command<
  'ClaimQuote',
  {
    readonly quoteRequestId: number;
    /** The verified account that claims the request. */
    readonly buyerAccountId: number;
    /** Whether the caller's claim token is the request's (checked by the application, which holds the key). */
    readonly claimTokenMatches: boolean;
  }
>;

export type QuoteCommand = RequestQuote | RespondToQuote | ClaimQuote | RespondToCounterOffer;
