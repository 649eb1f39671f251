import type { Actor } from '@marketplace/eventsourcing';
import { handleCommand } from '@marketplace/eventsourcing';
import type { QuoteResponseDraft } from '../domain/quote.commands.js';
import { quoteDecider } from '../domain/quote.decider.js';
import type { QuoteDependencies } from './quote.dependencies.js';
import { QUOTE_STREAM_TYPE, quoteStreamIdOf } from './quote.dependencies.js';
import type { StoredQuote } from './request-quote.js';

export interface RespondToQuoteInput {
  readonly quoteRequestId: number;
  readonly sellerAccountId: number;
  readonly draft: QuoteResponseDraft;
  readonly actor: Actor;
  readonly correlationId?: string;
  readonly traceparent?: string;
}

/**
 * The owning seller accepts, counters or declines a pending request. Two responses racing on one request: the
 * loser re-reads the stream once and the decider refuses it as already answered (a clear conflict, never a
 * second response). The buyer is emailed by the notification consumer, not here.
 */
export const respondToQuote = (deps: QuoteDependencies, input: RespondToQuoteInput): Promise<StoredQuote> =>
  deps.db.transaction(async (tx) => {
    const { state, version } = await handleCommand({
      store: deps.store,
      decider: quoteDecider,
      streamId: quoteStreamIdOf(input.quoteRequestId),
      streamType: QUOTE_STREAM_TYPE,
      tx,
      retryOnConflict: 1,
      command: {
        type: 'RespondToQuote',
        data: {
          quoteRequestId: input.quoteRequestId,
          sellerAccountId: input.sellerAccountId,
          draft: input.draft,
        },
        metadata: {
          now: deps.clock.now(),
          actor: input.actor,
          correlationId: input.correlationId,
          traceparent: input.traceparent,
        },
      },
    });
    if (state.status !== 'requested')
      throw new Error(`RespondToQuote left quote ${input.quoteRequestId} absent`);
    const stored = { quoteRequest: state.quoteRequest, version };
    await deps.quoteRequests.save(tx, stored);
    return stored;
  });
