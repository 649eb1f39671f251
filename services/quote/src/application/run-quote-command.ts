import type { CommandContext } from '@marketplace/eventsourcing';
import { handleCommand } from '@marketplace/eventsourcing';
import type { QuoteCommand } from '../domain/quote.commands.js';
import { quoteDecider } from '../domain/quote.decider.js';
import type { QuoteDependencies } from './quote.dependencies.js';
import { QUOTE_STREAM_TYPE, quoteStreamIdOf } from './quote.dependencies.js';
import type { StoredQuote } from './request-quote.js';

/**
 * Decides a command on an existing request and saves the result to the sellers' list, in one transaction. Two
 * commands racing on one request: the loser re-reads the stream once and the decider judges it again (a clear
 * conflict or nothing to do, never a second answer).
 */
export const runQuoteCommand = (
  deps: QuoteDependencies,
  quoteRequestId: number,
  command: Omit<Exclude<QuoteCommand, { type: 'RequestQuote' }>, 'metadata'>,
  context: CommandContext,
): Promise<StoredQuote> =>
  deps.db.transaction(async (tx) => {
    const { state, version } = await handleCommand({
      store: deps.store,
      decider: quoteDecider,
      streamId: quoteStreamIdOf(quoteRequestId),
      streamType: QUOTE_STREAM_TYPE,
      tx,
      retryOnConflict: 1,
      command: {
        ...command,
        metadata: {
          now: deps.clock.now(),
          actor: context.actor,
          correlationId: context.correlationId,
          traceparent: context.traceparent,
        },
      } as QuoteCommand,
    });
    if (state.status !== 'requested') throw new Error(`${command.type} left quote ${quoteRequestId} absent`);
    const stored = { quoteRequest: state.quoteRequest, version };
    await deps.quoteRequests.save(tx, stored);
    return stored;
  });
