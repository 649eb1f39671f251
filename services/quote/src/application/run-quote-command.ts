import type { CommandContext, CompanionWrite } from '@marketplace/eventsourcing';
import { handleCommand } from '@marketplace/eventsourcing';
import type { QuoteCommand } from '../domain/quote.commands.js';
import { quoteDecider, type QuoteState } from '../domain/quote.decider.js';
import type { QuoteDependencies } from './quote.dependencies.js';
import { QUOTE_STREAM_TYPE, quoteStreamIdOf } from './quote.dependencies.js';
import type { StoredQuote } from './request-quote.js';

/**
 * Decides a command on an existing request; the append writes the sellers' list row in its own statement, so
 * the two commit together without a transaction. Two commands racing on one request: the loser re-reads the
 * stream once and the decider judges it again (a clear conflict or nothing to do, never a second answer).
 */
export const runQuoteCommand = async (
  deps: QuoteDependencies,
  quoteRequestId: number,
  command: Omit<Exclude<QuoteCommand, { type: 'RequestQuote' }>, 'metadata'>,
  context: CommandContext,
): Promise<StoredQuote> => {
  const { state, version } = await handleCommand({
    store: deps.store,
    decider: quoteDecider,
    streamId: quoteStreamIdOf(quoteRequestId),
    streamType: QUOTE_STREAM_TYPE,
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
    companion: rowOf(deps),
  });
  if (state.status !== 'requested') throw new Error(`${command.type} left quote ${quoteRequestId} absent`);
  return { quoteRequest: state.quoteRequest, version };
};

/** The sellers' list row of a decided request, written with its events. */
export const rowOf =
  (deps: QuoteDependencies) =>
  ({ state, version }: { readonly state: QuoteState; readonly version: number }): CompanionWrite => {
    if (state.status !== 'requested') throw new Error('a quote command left its request absent');
    return deps.quoteRequests.rowOf({ quoteRequest: state.quoteRequest, version });
  };
