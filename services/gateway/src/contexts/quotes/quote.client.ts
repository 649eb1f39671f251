import { quoteV1 } from '@marketplace/proto';
import type { GrpcClientOptions } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';

/** The gateway's view of the quote service: one method per RPC it uses, failures as AppErrors. */
export interface QuoteClient {
  requestQuote(
    request: quoteV1.RequestQuoteRequest,
  ): Promise<quoteV1.RequestQuoteResponse & { quoteRequest: quoteV1.QuoteRequest }>;
  claimQuoteRequest(request: quoteV1.ClaimQuoteRequestRequest): Promise<quoteV1.QuoteRequest>;
  listQuoteRequests(request: quoteV1.ListQuoteRequestsRequest): Promise<quoteV1.ListQuoteRequestsResponse>;
  respondToQuote(request: quoteV1.RespondToQuoteRequest): Promise<quoteV1.QuoteRequest>;
  respondToCounterOffer(request: quoteV1.RespondToCounterOfferRequest): Promise<quoteV1.QuoteRequest>;
  getBuyerQuoteRequest(request: quoteV1.GetBuyerQuoteRequestRequest): Promise<quoteV1.QuoteRequest>;
  listBuyerQuoteRequests(
    request: quoteV1.ListBuyerQuoteRequestsRequest,
  ): Promise<quoteV1.ListBuyerQuoteRequestsResponse>;
  countQuoteRequestsSince(sinceMs: number): Promise<number>;
  close(): void;
}

const present = (quoteRequest: quoteV1.QuoteRequest | undefined, rpc: string): quoteV1.QuoteRequest => {
  if (!quoteRequest) throw new Error(`${rpc} answered without a quote request`);
  return quoteRequest;
};

/** Reads, sent once more when their replica went away (writes only with an idempotency key). */
const REPEATABLE = ['ListQuoteRequests', 'GetQuoteRequest', 'CountQuoteRequestsSince'];

export const createQuoteClient = (address: string, options?: GrpcClientOptions): QuoteClient => {
  const grpc = createGrpcClient(quoteV1.QuoteServiceDefinition, address, {
    ...options,
    repeatableMethods: REPEATABLE,
  });
  const { client } = grpc;
  return {
    requestQuote: async (request) => {
      const answer = await client.requestQuote(request);
      return { ...answer, quoteRequest: present(answer.quoteRequest, 'RequestQuote') };
    },
    claimQuoteRequest: async (request) =>
      present((await client.claimQuoteRequest(request)).quoteRequest, 'ClaimQuoteRequest'),
    listQuoteRequests: (request) => client.listQuoteRequests(request),
    respondToQuote: async (request) =>
      present((await client.respondToQuote(request)).quoteRequest, 'RespondToQuote'),
    respondToCounterOffer: async (request) =>
      present((await client.respondToCounterOffer(request)).quoteRequest, 'RespondToCounterOffer'),
    getBuyerQuoteRequest: async (request) =>
      present((await client.getBuyerQuoteRequest(request)).quoteRequest, 'GetBuyerQuoteRequest'),
    listBuyerQuoteRequests: (request) => client.listBuyerQuoteRequests(request),
    countQuoteRequestsSince: async (sinceMs) => (await client.countQuoteRequestsSince({ sinceMs })).count,
    close: () => grpc.close(),
  };
};
