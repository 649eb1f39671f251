import { Router } from 'express';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { Problems } from '../http/problem.js';
import type { TopicDoc } from './asyncapi.document.js';
import { asyncApiDocument } from './asyncapi.document.js';
import { EVENT_DESCRIPTORS } from './asyncapi.descriptors.generated.js';
import { DISCOVERY_CACHE_CONTROL, sendDocument } from './discovery.routes.js';
import type { RouteDoc } from './openapi.describe.js';

/** The topics of docs/specification.md, "Event stream", and the protobuf message every value on each is. */
export const EVENT_TOPICS: readonly TopicDoc[] = [
  {
    channel: 'listing',
    address: 'marketplace.listing.v1',
    message: 'marketplace.listing.v1.ListingEvent',
    description: 'Listings created, updated, re-stocked, reserved and released (key: product_<n>).',
  },
  {
    channel: 'account',
    address: 'marketplace.account.v1',
    message: 'marketplace.account.v1.AccountEvent',
    description: 'Seller and buyer accounts opened (key: account_<n>).',
  },
  {
    channel: 'quote',
    address: 'marketplace.quote.v1',
    message: 'marketplace.quote.v1.QuoteEvent',
    description: "Quote requests and the sellers' responses (key: quote_<n>).",
  },
  {
    channel: 'order',
    address: 'marketplace.order.v1',
    message: 'marketplace.order.v1.OrderEvent',
    description:
      'Checkout sessions (key: checkout_<uuid>) and orders through shipping, delivery, disputes and completion (key: order_<n>).',
  },
  {
    channel: 'subscription',
    address: 'marketplace.subscription.v1',
    message: 'marketplace.subscription.v1.SubscriptionEvent',
    description: 'Saved-search subscriptions created and removed (key: sub_<id>).',
  },
];

export const asyncApiRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/asyncapi.json',
    operationId: 'getAsyncApi',
    summary: 'The event stream contract (AsyncAPI 3.0)',
    tags: ['discovery'],
    auth: 'none',
    responses: { 200: { description: 'The AsyncAPI document', contentType: 'application/json', text: true } },
  },
];

/** GET /asyncapi.json, generated once at start-up from the event protos' descriptors. */
export const asyncApiRoutes = (problems: Problems, publicBaseUrl: string): Router => {
  const body = JSON.stringify(asyncApiDocument(EVENT_TOPICS, EVENT_DESCRIPTORS, publicBaseUrl));
  const router = Router();
  router
    .route('/asyncapi.json')
    .get((_req, res) => sendDocument(res, 'application/json', body, DISCOVERY_CACHE_CONTROL))
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};
