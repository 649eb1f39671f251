import type { CommandContext } from '@marketplace/eventsourcing';
import type { QuoteResponseDraft } from '../domain/quote.commands.js';
import type { QuoteDependencies } from './quote.dependencies.js';
import type { StoredQuote } from './request-quote.js';
import { runQuoteCommand } from './run-quote-command.js';

export interface RespondToQuoteInput extends CommandContext {
  readonly quoteRequestId: number;
  readonly sellerAccountId: number;
  readonly draft: QuoteResponseDraft;
}

/**
 * The owning seller accepts, counters or declines a pending request; a second response is refused as already
 * answered. The buyer is emailed by the notification consumer, not here.
 */
export const respondToQuote = (deps: QuoteDependencies, input: RespondToQuoteInput): Promise<StoredQuote> =>
  runQuoteCommand(
    deps,
    input.quoteRequestId,
    {
      type: 'RespondToQuote',
      data: {
        quoteRequestId: input.quoteRequestId,
        sellerAccountId: input.sellerAccountId,
        draft: input.draft,
      },
    },
    input,
  );
