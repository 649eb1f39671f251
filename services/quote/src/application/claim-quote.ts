import type { CommandContext } from '@marketplace/eventsourcing';
import type { QuoteDependencies } from './quote.dependencies.js';
import type { StoredQuote } from './request-quote.js';
import { runQuoteCommand } from './run-quote-command.js';

export interface ClaimQuoteInput extends CommandContext {
  readonly quoteRequestId: number;
  readonly buyerAccountId: number;
  readonly claimToken: string;
}

/** A buyer account takes ownership of an anonymous request with its claim token (docs/specification.md). */
export const claimQuote = (deps: QuoteDependencies, input: ClaimQuoteInput): Promise<StoredQuote> =>
  runQuoteCommand(
    deps,
    input.quoteRequestId,
    {
      type: 'ClaimQuote',
      data: {
        quoteRequestId: input.quoteRequestId,
        buyerAccountId: input.buyerAccountId,
        claimTokenMatches: deps.claimTokens.matches(input.quoteRequestId, input.claimToken),
      },
    },
    input,
  );
