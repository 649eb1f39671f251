import { parseActor } from '@marketplace/eventsourcing';
import { quoteV1 } from '@marketplace/proto';
import { actingAccountId, type GrpcService } from '@marketplace/rpc';
import { toQuoteRequestMessage } from '../adapters/quote-proto.mapper.js';
import type { ListBuyerQuoteRequestsInput, ListQuoteRequestsInput } from '../application/quote.queries.js';
import type { ClaimQuoteInput } from '../application/claim-quote.js';
import type { FiledQuote, RequestQuoteInput, StoredQuote } from '../application/request-quote.js';
import type { RespondToQuoteInput } from '../application/respond-to-quote.js';
import type { RespondToCounterOfferInput } from '../application/respond-to-counter-offer.js';

/** The application functions the gRPC API exposes. */
export interface QuoteApplication {
  requestQuote(input: RequestQuoteInput): Promise<FiledQuote>;
  claimQuote(input: ClaimQuoteInput): Promise<StoredQuote>;
  listQuoteRequests(input: ListQuoteRequestsInput): Promise<{ quoteRequests: StoredQuote[]; total: number }>;
  respondToQuote(input: RespondToQuoteInput): Promise<StoredQuote>;
  respondToCounterOffer(input: RespondToCounterOfferInput): Promise<StoredQuote>;
  getQuoteRequest(quoteRequestId: number): Promise<StoredQuote>;
  getBuyerQuoteRequest(input: {
    readonly quoteRequestId: number;
    readonly buyerAccountId?: number;
    readonly claimToken: string;
  }): Promise<StoredQuote>;
  listBuyerQuoteRequests(
    input: ListBuyerQuoteRequestsInput,
  ): Promise<{ quoteRequests: StoredQuote[]; total: number }>;
  countQuoteRequestsSince(since: number): Promise<number>;
}

const messageOf = ({ quoteRequest, version }: StoredQuote): quoteV1.QuoteRequest =>
  toQuoteRequestMessage(quoteRequest, version);

const emptyAsAbsent = (value: string): string | undefined => (value === '' ? undefined : value);

/** The draft and call context of an answer in a negotiation, either side's. */
const answerOf = (
  request: quoteV1.RespondToQuoteRequest | quoteV1.RespondToCounterOfferRequest,
  traceparent: string | undefined,
) => ({
  draft: {
    action: request.action,
    counterPriceCents: request.counterPriceCents,
    message: emptyAsAbsent(request.message),
  },
  actor: parseActor(request.actor),
  correlationId: emptyAsAbsent(request.correlationId),
  traceparent,
});

type ActorMessage = quoteV1.RequestQuoteRequest['actor'];

/** An account the request names must be the verified actor's (docs/security.md, "Internal calls"). */
const buyerAccountOf = (actor: ActorMessage, accountId: number | undefined): number | undefined =>
  accountId === undefined ? undefined : actingAccountId(actor, accountId, 'buyer_account_id');

const sellerAccountOf = (actor: ActorMessage, accountId: number): number =>
  actingAccountId(actor, accountId, 'seller_account_id', ['seller']);

/** QuoteService over gRPC: maps messages to application inputs and back; AppErrors become statuses in rpc. */
export const quoteGrpcService = (
  application: QuoteApplication,
): GrpcService<quoteV1.QuoteServiceDefinition> => ({
  definition: quoteV1.QuoteServiceDefinition,
  implementation: {
    async requestQuote(request, context) {
      const stored = await application.requestQuote({
        productId: request.productId,
        draft: {
          quantity: request.quantity,
          buyer: {
            email: request.buyer?.email ?? '',
            name: emptyAsAbsent(request.buyer?.name ?? ''),
            company: emptyAsAbsent(request.buyer?.company ?? ''),
          },
          targetPriceCents: request.targetPriceCents,
          message: emptyAsAbsent(request.message),
          shippingDestination: emptyAsAbsent(request.shippingDestination),
        },
        buyerAccountId: buyerAccountOf(request.actor, request.buyerAccountId),
        actor: parseActor(request.actor),
        correlationId: emptyAsAbsent(request.correlationId),
        // The caller's trace context travels on to the events (and from them to the log's headers).
        traceparent: context.metadata.get('traceparent'),
        idempotencyKey: request.idempotencyKey,
      });
      return { quoteRequest: messageOf(stored), claimToken: stored.claimToken ?? '' };
    },
    async claimQuoteRequest(request, context) {
      const stored = await application.claimQuote({
        quoteRequestId: request.quoteRequestId,
        buyerAccountId: actingAccountId(request.actor, request.buyerAccountId, 'buyer_account_id', ['buyer']),
        claimToken: request.claimToken,
        actor: parseActor(request.actor),
        correlationId: emptyAsAbsent(request.correlationId),
        traceparent: context.metadata.get('traceparent'),
      });
      return { quoteRequest: messageOf(stored) };
    },
    async listQuoteRequests(request) {
      const { quoteRequests, total } = await application.listQuoteRequests({
        sellerAccountId: sellerAccountOf(request.actor, request.sellerAccountId),
        status: request.status,
        limit: request.limit,
        createdSince: request.createdSinceMs,
      });
      return { quoteRequests: quoteRequests.map(messageOf), total };
    },
    async respondToQuote(request, context) {
      const stored = await application.respondToQuote({
        quoteRequestId: request.quoteRequestId,
        sellerAccountId: sellerAccountOf(request.actor, request.sellerAccountId),
        ...answerOf(request, context.metadata.get('traceparent')),
      });
      return { quoteRequest: messageOf(stored) };
    },
    async respondToCounterOffer(request, context) {
      const stored = await application.respondToCounterOffer({
        quoteRequestId: request.quoteRequestId,
        // Only the verified buyer account answers its own counter-offers (docs/security.md, "Internal calls").
        buyerAccountId: actingAccountId(request.actor, request.buyerAccountId, 'buyer_account_id', ['buyer']),
        ...answerOf(request, context.metadata.get('traceparent')),
      });
      return { quoteRequest: messageOf(stored) };
    },
    async getQuoteRequest(request) {
      return { quoteRequest: messageOf(await application.getQuoteRequest(request.quoteRequestId)) };
    },
    async getBuyerQuoteRequest(request) {
      const stored = await application.getBuyerQuoteRequest({
        quoteRequestId: request.quoteRequestId,
        buyerAccountId: buyerAccountOf(request.actor, request.buyerAccountId),
        claimToken: request.claimToken,
      });
      return { quoteRequest: messageOf(stored) };
    },
    async listBuyerQuoteRequests(request) {
      const { quoteRequests, total } = await application.listBuyerQuoteRequests({
        buyerAccountId: actingAccountId(request.actor, request.buyerAccountId, 'buyer_account_id'),
        status: request.status,
        limit: request.limit,
        offset: request.offset,
      });
      return { quoteRequests: quoteRequests.map(messageOf), total };
    },
    async countQuoteRequestsSince(request) {
      return { count: await application.countQuoteRequestsSince(request.sinceMs) };
    },
  },
});
