import type { Transaction } from '@marketplace/database';
import type { Actor, RecordIdempotencyKey } from '@marketplace/eventsourcing';
import { fold, handleCommand, idempotencyScopeOf, idempotentRequestOf } from '@marketplace/eventsourcing';
import { notFound } from '@marketplace/platform';
import type { QuoteRequestDraft } from '../domain/quote.commands.js';
import { quoteDecider } from '../domain/quote.decider.js';
import type { QuoteEvent, QuoteRequest } from '../domain/quote.events.js';
import { validateQuoteRequest } from '../domain/quote.rules.js';
import type { QuoteDependencies } from './quote.dependencies.js';
import { QUOTE_STREAM_TYPE, quoteStreamIdOf } from './quote.dependencies.js';
import { rowOf } from './run-quote-command.js';

export interface RequestQuoteInput {
  readonly productId: string;
  readonly draft: QuoteRequestDraft;
  /** Set only from a verified API key or agent token. */
  readonly buyerAccountId?: number;
  readonly actor: Actor;
  readonly correlationId?: string;
  readonly traceparent?: string;
  /**
   * The client's key: a repeat of the same request answers the quote request it created (docs/idempotency.md).
   * Scoped by the buyer's account, else by the buyer's email.
   */
  readonly idempotencyKey?: string | undefined;
}

export interface StoredQuote {
  readonly quoteRequest: QuoteRequest;
  /** The stream's version: the expected version of the request's next command. */
  readonly version: number;
}

/** A filed request, with the claim token of an anonymous one (docs/specification.md, "Quotes"). */
export interface FiledQuote extends StoredQuote {
  readonly claimToken?: string | undefined;
}

/** Asked anonymously: claimed since, or not. */
const wasAnonymous = ({ buyerAccountId, claimedAt }: QuoteRequest): boolean =>
  buyerAccountId === undefined || claimedAt !== undefined;

/**
 * Files a quote request with the listing's seller, once per idempotency key when the buyer sends one: a repeat
 * answers the request it created (as it is now, answered or not), another request with that key is an
 * idempotency conflict. Validation runs before an id is taken or a key recorded, so a bad request uses neither.
 */
export const requestQuote = async (
  deps: QuoteDependencies,
  input: RequestQuoteInput,
): Promise<FiledQuote> => {
  validateQuoteRequest(input.draft);
  const idempotent = idempotentRequestOf(input.idempotencyKey, {
    path: 'idempotency_key',
    scope: idempotencyScopeOf({ accountId: input.buyerAccountId, email: input.draft.buyer.email }),
    operation: 'RequestQuote',
    request: { productId: input.productId, buyerAccountId: input.buyerAccountId, draft: input.draft },
  });
  const filed = await deps.idempotencyKeys.createOnce(idempotent, {
    create: (recordKey) => fileQuoteRequest(deps, input, recordKey),
    replay: async (streamId) => {
      const { events, version } = await deps.store.readStream<QuoteEvent>(streamId);
      const state = fold(
        quoteDecider,
        events.map(({ type, data }) => ({ type, data })),
      );
      if (state.status !== 'requested')
        throw new Error(`idempotency key of ${streamId}, which has no request`);
      return { quoteRequest: state.quoteRequest, version };
    },
  });
  const { quoteRequest } = filed;
  return wasAnonymous(quoteRequest)
    ? { ...filed, claimToken: deps.claimTokens.tokenOf(quoteRequest.quoteRequestId) }
    : filed;
};

/**
 * The listing comes from the service's own projection of the listing events: only a public listing takes
 * requests (anything else is as unknown as a missing product). The append writes the event (the outbox) and the
 * seller's list row in one statement; only an idempotency key adds a transaction, to record the key with them.
 * The seller is emailed by the notification consumer.
 */
const fileQuoteRequest = async (
  deps: QuoteDependencies,
  input: RequestQuoteInput,
  recordKey: RecordIdempotencyKey | undefined,
): Promise<StoredQuote> => {
  const listing = await deps.listings.find(deps.db, input.productId);
  if (listing === undefined || !listing.promotePublicly)
    throw notFound(`product ${input.productId} not found`);
  // nextval never rolls back: a failed request only leaves a gap in the ids.
  const quoteRequestId = await deps.allocateQuoteRequestId(deps.db);
  const streamId = quoteStreamIdOf(quoteRequestId);
  const file = (tx?: Transaction) =>
    handleCommand({
      store: deps.store,
      decider: quoteDecider,
      streamId,
      streamType: QUOTE_STREAM_TYPE,
      // The id was just taken from the sequence: nothing to read.
      newStream: true,
      tx,
      command: {
        type: 'RequestQuote',
        data: {
          quoteRequestId,
          product: {
            productId: listing.productId,
            sellerAccountId: listing.sellerAccountId,
            name: listing.name,
            unitPriceCents: listing.priceCents,
            currency: listing.currency,
            availableQuantity: listing.quantity,
            // The terms the buyer saw, kept with the request (docs/specification.md, "Quotes"); null: none set.
            // Unknown (a snapshot from before terms were projected): none recorded, the listing's apply.
            ...(listing.shipping === undefined ? {} : { shipping: listing.shipping }),
          },
          buyerAccountId: input.buyerAccountId,
          draft: input.draft,
        },
        metadata: {
          now: deps.clock.now(),
          actor: input.actor,
          correlationId: input.correlationId,
          traceparent: input.traceparent,
        },
      },
      companion: rowOf(deps),
    });
  const { state, version } =
    recordKey === undefined
      ? await file()
      : await deps.db.transaction(async (tx) => {
          await recordKey(tx, streamId);
          return file(tx);
        });
  if (state.status !== 'requested') throw new Error(`RequestQuote left quote ${quoteRequestId} absent`);
  return { quoteRequest: state.quoteRequest, version };
};
