import type { CommandContext } from '@marketplace/eventsourcing';
import type { QuoteResponseDraft } from '../domain/quote.commands.js';
import type { QuoteDependencies } from './quote.dependencies.js';
import type { StoredQuote } from './request-quote.js';
import { runQuoteCommand } from './run-quote-command.js';

export interface RespondToCounterOfferInput extends CommandContext {
  readonly quoteRequestId: number;
  readonly buyerAccountId: number;
  readonly draft: QuoteResponseDraft;
}

/**
 * The owning buyer account accepts, counters or declines the seller's open counter-offer. The seller is emailed
 * by the notification consumer, not here.
 */
export const respondToCounterOffer = (
  deps: QuoteDependencies,
  input: RespondToCounterOfferInput,
): Promise<StoredQuote> =>
  runQuoteCommand(
    deps,
    input.quoteRequestId,
    {
      type: 'RespondToCounterOffer',
      data: {
        quoteRequestId: input.quoteRequestId,
        buyerAccountId: input.buyerAccountId,
        draft: input.draft,
      },
    },
    input,
  );
