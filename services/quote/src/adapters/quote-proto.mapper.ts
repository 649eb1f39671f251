import type { quoteV1 } from '@marketplace/proto';
import { isQuoteAction } from '@marketplace/vocabulary';
import { negotiationStateOf } from '../domain/quote.decider.js';
import type { QuoteRequest, QuoteStep } from '../domain/quote.events.js';

/**
 * Domain values ⇄ protobuf messages, shared by the event codec and the gRPC transport so the two never disagree.
 * Protobuf has no absent strings: an absent name, company or message travels as ''.
 */

const absentWhenEmpty = (value: string): string | undefined => (value === '' ? undefined : value);

export const toQuoteRequestMessage = (quote: QuoteRequest, version: number): quoteV1.QuoteRequest => ({
  quoteRequestId: quote.quoteRequestId,
  productId: quote.product.productId,
  sellerAccountId: quote.product.sellerAccountId,
  quantity: quote.quantity,
  buyer: { email: quote.buyer.email, name: quote.buyer.name ?? '', company: quote.buyer.company ?? '' },
  buyerAccountId: quote.buyerAccountId,
  targetPriceCents: quote.targetPriceCents,
  message: quote.message ?? '',
  shippingDestination: quote.shippingDestination ?? '',
  status: quote.status,
  response: quote.response && {
    action: quote.response.action,
    counterPriceCents: quote.response.counterPriceCents,
    message: quote.response.message ?? '',
    respondedAtMs: quote.response.respondedAt,
    respondedByAccountId: quote.response.respondedByAccountId,
  },
  agreedUnitPriceCents: quote.agreedUnitPriceCents,
  productName: quote.product.name,
  listedUnitPriceCents: quote.product.unitPriceCents,
  currency: quote.product.currency,
  availableQuantity: quote.product.availableQuantity,
  exceedsAvailableStock: quote.exceedsAvailableStock,
  createdAtMs: quote.createdAt,
  updatedAtMs: quote.updatedAt,
  version,
  claimedAtMs: quote.claimedAt,
  offerExpiresAtMs: quote.offerExpiresAt,
  history: (quote.history ?? []).map((step) => ({
    party: step.party,
    action: step.action,
    priceCents: step.priceCents,
    message: step.message ?? '',
    atMs: step.at,
    expiresAtMs: step.expiresAt,
    byAccountId: step.byAccountId,
  })),
  negotiationState: negotiationStateOf(quote),
  listingShipping: quote.product.shipping
    ? {
        mode: quote.product.shipping.mode,
        cents: quote.product.shipping.cents,
        shipFromRegion: quote.product.shipping.shipFromRegion,
      }
    : undefined,
  listingShippingRecorded: quote.product.shipping !== undefined,
});

const stepOf = (quoteRequestId: number, step: quoteV1.QuoteStep): QuoteStep => {
  if ((step.party !== 'buyer' && step.party !== 'seller') || !isQuoteAction(step.action)) {
    throw new Error(`quote request ${quoteRequestId} has an unknown step: ${step.party} ${step.action}`);
  }
  return {
    party: step.party,
    action: step.action,
    priceCents: step.priceCents,
    message: absentWhenEmpty(step.message),
    at: step.atMs,
    expiresAt: step.expiresAtMs,
    byAccountId: step.byAccountId,
  };
};

/** Throws when the message holds a status or action this version does not know. */
export const fromQuoteRequestMessage = (message: quoteV1.QuoteRequest): QuoteRequest => {
  const { status, response } = message;
  if (status !== 'pending' && status !== 'responded') {
    throw new Error(`quote request ${message.quoteRequestId} has an unknown status: ${status}`);
  }
  if (response !== undefined && !isQuoteAction(response.action)) {
    throw new Error(`quote request ${message.quoteRequestId} has an unknown action: ${response.action}`);
  }
  return {
    quoteRequestId: message.quoteRequestId,
    product: {
      productId: message.productId,
      sellerAccountId: message.sellerAccountId,
      name: message.productName,
      unitPriceCents: message.listedUnitPriceCents,
      currency: message.currency,
      availableQuantity: message.availableQuantity,
      ...(!message.listingShippingRecorded
        ? {}
        : message.listingShipping === undefined
          ? { shipping: null }
          : {
              shipping: {
                mode: message.listingShipping.mode,
                ...(message.listingShipping.cents === undefined
                  ? {}
                  : { cents: message.listingShipping.cents }),
                ...(message.listingShipping.shipFromRegion === undefined
                  ? {}
                  : { shipFromRegion: message.listingShipping.shipFromRegion }),
              },
            }),
    },
    quantity: message.quantity,
    buyer: {
      email: message.buyer?.email ?? '',
      name: absentWhenEmpty(message.buyer?.name ?? ''),
      company: absentWhenEmpty(message.buyer?.company ?? ''),
    },
    buyerAccountId: message.buyerAccountId,
    targetPriceCents: message.targetPriceCents,
    message: absentWhenEmpty(message.message),
    ...(message.shippingDestination === '' ? {} : { shippingDestination: message.shippingDestination }),
    status,
    response:
      response === undefined || !isQuoteAction(response.action)
        ? undefined
        : {
            action: response.action,
            counterPriceCents: response.counterPriceCents,
            message: absentWhenEmpty(response.message),
            respondedAt: response.respondedAtMs,
            respondedByAccountId: response.respondedByAccountId,
          },
    agreedUnitPriceCents: message.agreedUnitPriceCents,
    exceedsAvailableStock: message.exceedsAvailableStock,
    createdAt: message.createdAtMs,
    updatedAt: message.updatedAtMs,
    claimedAt: message.claimedAtMs,
    offerExpiresAt: message.offerExpiresAtMs,
    history: message.history.map((step) => stepOf(message.quoteRequestId, step)),
  };
};
