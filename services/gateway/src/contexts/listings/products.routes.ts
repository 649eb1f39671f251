import { Router } from 'express';
import { z } from 'zod';
import type { listingV1 } from '@marketplace/proto';
import type { IdentityService } from '../../edge/http/auth.middleware.js';
import type { ListingCommands } from './listing.commands.js';
import { authenticate, authenticatedPrincipalOf } from '../../edge/http/auth.middleware.js';
import { idempotencyKeyOf } from '../../edge/http/idempotency-key.js';
import { ifMatchVersionsOf } from '../../edge/http/if-match.js';
import { jsonBody } from '../../edge/http/json-body.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { centsOf, createListingBodySchema, listingDraftOf } from './create-listing.schema.js';
import type { UpdateListingBody } from './update-listing.schema.js';
import {
  bulkUpdateMoqBodySchema,
  bulkUpdatePriceBodySchema,
  listingQuantityBodySchema,
  updateListingBodySchema,
} from './update-listing.schema.js';
import { listingShippingBodySchema } from '../../edge/schemas/shipping.schema.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import { productIdOfPath } from '../../edge/http/path-ids.js';
import { requestIdOf } from '../../edge/http/request-log.js';
import {
  bulkUpdateListingsOutput,
  createdListingOutput,
  sellerListingOutput,
  sellerListingsPageOutput,
} from './listing.tools.js';
import { sellerListingsQuerySchema } from './seller-listings.schema.js';
import { bulkUpsertBodyDoc, bulkUpsertBodySchema, bulkUpsertOutput } from './bulk-upsert.js';

import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';

/** 1,000 items of a few hundred bytes to a few kilobytes each: more than one listing's body needs. */
const BULK_UPSERT_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** PUT's body to the listing service's changes: dollars become cents, `null` and absent both mean unchanged. */
export const listingChangesOf = (body: UpdateListingBody): listingV1.ListingChanges => ({
  name: body.name ?? undefined,
  description: body.description ?? undefined,
  sku: body.sku ?? undefined,
  category: body.category ?? undefined,
  condition: body.condition ?? undefined,
  priceCents: centsOf(body.price),
  minOrderQuantity: body.minOrderQuantity ?? undefined,
  minQuoteQuantity: body.minQuoteQuantity ?? undefined,
  brand: body.brand ?? undefined,
  originalRetailPriceCents: centsOf(body.originalRetailPrice),
  instantCheckout: body.instantCheckout ?? undefined,
  promotePublicly: body.promotePublicly ?? undefined,
  quantity: body.quantity ?? undefined,
  imageUrl: body.imageUrl ?? undefined,
  galleryImageUrls: body.galleryImageUrls == null ? undefined : { urls: body.galleryImageUrls },
  shipping: body.shipping ?? undefined,
});

/** A listing's ETag: its aggregate version, strong (docs/specification.md, "Listings"). */
export const etagOf = (version: number): string => `"${version}"`;

/** Seller REST endpoints (docs/specification.md, "Seller endpoints"). */
export const productsRoutes = (
  problems: Problems,
  listings: ListingCommands,
  identity: IdentityService,
  bodyLimitBytes: number,
): Router => {
  const router = Router();
  router
    .route('/api/products')
    .post(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const idempotencyKey = idempotencyKeyOf(req, res);
      const body = parseOrThrow(createListingBodySchema, req.body, 'listing');
      const created = await listings.create(
        authenticatedPrincipalOf(req),
        listingDraftOf(body),
        requestIdOf(req),
        idempotencyKey,
      );
      res.status(201).location(created.url).json(created);
    })
    .get(authenticate(identity, { required: true }), async (req, res) => {
      const query = parseOrThrow(sellerListingsQuerySchema, req.query, 'query parameters');
      res.json(
        await listings.listMine(authenticatedPrincipalOf(req), {
          ...query,
          updatedSinceMs: query.updated_since === undefined ? undefined : Date.parse(query.updated_since),
        }),
      );
    })
    .all(methodNotAllowed(problems, ['GET', 'POST']));
  // Before /api/products/:productId, which would otherwise take "bulk" for a product id.
  router
    .route('/api/products/bulk')
    .post(
      authenticate(identity, { required: true }),
      // Each item's text is checked with the item (bulkItemsOf): one bad item never fails the call.
      ...jsonBody(Math.max(bodyLimitBytes, BULK_UPSERT_BODY_LIMIT_BYTES), { checkText: false }),
      async (req, res) => {
        const idempotencyKey = idempotencyKeyOf(req, res);
        const body = parseOrThrow(bulkUpsertBodySchema, req.body, 'bulk upsert');
        res.json(
          await listings.bulkUpsert(authenticatedPrincipalOf(req), body, requestIdOf(req), idempotencyKey),
        );
      },
    )
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/products/bulk-update-price')
    .post(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const body = parseOrThrow(bulkUpdatePriceBodySchema, req.body, 'bulk price update');
      res.json(await listings.bulkUpdate(authenticatedPrincipalOf(req), body, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/products/bulk-update-moq')
    .post(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const body = parseOrThrow(bulkUpdateMoqBodySchema, req.body, 'bulk minimum order quantity update');
      const request = { productIds: body.productIds, mode: 'moq_set', value: body.minOrderQuantity } as const;
      res.json(await listings.bulkUpdate(authenticatedPrincipalOf(req), request, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/products/:productId')
    .get(authenticate(identity, { required: true }), async (req, res) => {
      const productId = productIdOfPath(req.params.productId);
      const listing = await listings.getMine(authenticatedPrincipalOf(req), productId);
      res.set('ETag', etagOf(listing.version)).json(listing);
    })
    .put(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const productId = productIdOfPath(req.params.productId);
      const body = parseOrThrow(updateListingBodySchema, req.body, 'listing changes');
      const seller = authenticatedPrincipalOf(req);
      const changes = listingChangesOf(body);
      const updated = await listings.update(
        seller,
        productId,
        changes,
        requestIdOf(req),
        ifMatchVersionsOf(req),
      );
      res.set('ETag', etagOf(updated.version)).json(updated);
    })
    .delete(authenticate(identity, { required: true }), async (req, res) => {
      const productId = productIdOfPath(req.params.productId);
      const seller = authenticatedPrincipalOf(req);
      const withdrawn = await listings.withdraw(seller, productId, requestIdOf(req), ifMatchVersionsOf(req));
      res.set('ETag', etagOf(withdrawn.version)).json(withdrawn);
    })
    .all(methodNotAllowed(problems, ['GET', 'PUT', 'DELETE']));
  router
    .route('/api/products/:productId/relist')
    .post(authenticate(identity, { required: true }), async (req, res) => {
      const productId = productIdOfPath(req.params.productId);
      const seller = authenticatedPrincipalOf(req);
      const relisted = await listings.relist(seller, productId, requestIdOf(req), ifMatchVersionsOf(req));
      res.set('ETag', etagOf(relisted.version)).json(relisted);
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/products/:productId/quantity')
    .patch(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const productId = productIdOfPath(req.params.productId);
      const { quantity } = parseOrThrow(listingQuantityBodySchema, req.body, 'quantity');
      const seller = authenticatedPrincipalOf(req);
      const versions = ifMatchVersionsOf(req);
      const updated = await listings.setQuantity(seller, productId, quantity, requestIdOf(req), versions);
      res.set('ETag', etagOf(updated.version)).json(updated);
    })
    .all(methodNotAllowed(problems, ['PATCH']));
  router
    .route('/api/products/:productId/shipping')
    .put(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const productId = productIdOfPath(req.params.productId);
      const shipping = parseOrThrow(listingShippingBodySchema, req.body, 'shipping');
      const seller = authenticatedPrincipalOf(req);
      const versions = ifMatchVersionsOf(req);
      const updated = await listings.setShipping(seller, productId, shipping, requestIdOf(req), versions);
      res.set('ETag', etagOf(updated.version)).json(updated);
    })
    .all(methodNotAllowed(problems, ['PUT']));
  return router;
};

const productIdParams = z.object({ productId: z.string().describe('product_<n>') });
const SELLER_ERRORS = {
  400: 'Invalid body: errors names every offending field',
  401: 'No valid X-MCP-API-Key',
  403: 'Not a seller key',
} as const;
/** docs/specification.md, "Ids in paths": another seller's listing is answered as a missing one. */
const NO_LISTING_OF_YOURS =
  'No such listing of yours (another seller’s is answered as a missing one; any id that is not product_<n> ' +
  'with n ≤ 2^53 − 1 names none)';

/** The seller REST endpoints (docs/specification.md, "Seller endpoints") in /openapi.json, from the schemas the handlers parse with. */
export const productsRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/api/products',
    operationId: 'listMyListings',
    summary: 'Your own listings, filtered and paged by cursor',
    description:
      'The calling seller’s listings, public and in-app only, oldest change first, with the total matching the ' +
      'filters. Page with next_cursor until it is null. A listing changed while you page moves to the end and ' +
      'shows again, so a sync with updated_since misses nothing. Read-your-writes: a change shows at once.',
    tags: ['listings'],
    auth: 'api_key',
    query: sellerListingsQuerySchema,
    responses: {
      200: { description: 'One page of your listings', schema: sellerListingsPageOutput },
      400: 'Invalid query parameters (each in errors), or a cursor this list did not return',
      401: SELLER_ERRORS[401],
      403: 'Not a seller key',
    },
  },
  {
    method: 'get',
    path: '/api/products/{productId}',
    operationId: 'getMyListing',
    summary: 'Your listing as it stands, with its version',
    description:
      'Read-your-writes: the listing after your last change. The ETag header is the version; send it as ' +
      'If-Match on PUT. Another seller’s listing is 404, like a missing one.',
    tags: ['listings'],
    auth: 'api_key',
    pathParameters: productIdParams,
    responses: {
      200: { description: 'The listing, its status and version', schema: sellerListingOutput },
      401: SELLER_ERRORS[401],
      403: 'Not a seller key',
      404: NO_LISTING_OF_YOURS,
    },
  },
  {
    method: 'post',
    path: '/api/products',
    operationId: 'createListing',
    summary: 'Publish a listing',
    description:
      'Always creates a new listing (docs/specification.md, "Listings"): price in dollars (default 1), quantity (default 1), category ' +
      '(default electronics). An external imageUrl is re-hosted; without one the image library is searched and ' +
      'nothing similar gives the category’s neutral placeholder, which notices in the answer report. Counts ' +
      'as an availability confirmation. With an ' +
      'Idempotency-Key, a repeat of the same body answers the listing the key created (201, same id).',
    tags: ['listings'],
    auth: 'api_key',
    idempotencyKey: true,
    body: createListingBodySchema,
    responses: {
      201: {
        description: 'The listing as published; notices say when its image is the category placeholder',
        schema: createdListingOutput,
      },
      ...SELLER_ERRORS,
      403: 'Not a seller key',
    },
  },
  {
    method: 'post',
    path: '/api/products/bulk',
    operationId: 'bulkUpsertListings',
    summary: 'Create or update up to 1,000 listings in one call, each with its own result',
    description:
      'Each item is the body of POST /api/products. mode create makes a listing of every item; mode ' +
      'upsert_by_sku updates your one listing with the item’s sku (the fields the item sends replace the stored ' +
      'ones, as PUT does; quantity sets the stock) and creates one where none has it. Each item is created, ' +
      'updated, unchanged (it already held every value sent: nothing is written) or an error naming its fields; ' +
      'one bad item never fails the others. In upsert_by_sku an item needs a sku, a sku may appear once per call, ' +
      'and a sku several of your listings share is an error (update those by id). With an Idempotency-Key a ' +
      'repeat answers exactly what the first call did and writes nothing (docs/specification.md, "Bulk upsert").',
    tags: ['listings'],
    auth: 'api_key',
    idempotencyKey: true,
    body: bulkUpsertBodyDoc,
    responses: {
      200: {
        description: 'One result per item, in the order sent, and the counts',
        schema: bulkUpsertOutput,
      },
      400: 'Invalid mode, or items not 1 to 1,000 (errors names the field); a bad item is a result, not a 400',
      401: SELLER_ERRORS[401],
      403: 'Not a seller key',
    },
  },
  {
    method: 'put',
    path: '/api/products/{productId}',
    operationId: 'updateListing',
    summary: 'Change your listing: send what POST takes, the fields sent replace the stored ones',
    description:
      'Takes the body of POST /api/products (docs/specification.md, "Listings" names, price in dollars). Fields sent replace the stored ' +
      'ones: quantity sets the stock as PATCH …/quantity does, a new imageUrl or galleryImageUrls is fetched and ' +
      're-hosted; fields absent (or null) keep their value. Counts as an availability confirmation, also with ' +
      'an empty body. Optional If-Match with the ETag of GET /api/products/{productId} ("<version>"): the change ' +
      'applies only if the listing is still at that version, else 412 and nothing changes. Without If-Match the ' +
      'change applies to whatever version there is (no 428: the specification’s PUT needs no precondition). The ' +
      'answer carries the new ETag.',
    tags: ['listings'],
    auth: 'api_key',
    pathParameters: productIdParams,
    body: updateListingBodySchema,
    responses: {
      200: { description: 'The listing after the change, with its new version', schema: sellerListingOutput },
      ...SELLER_ERRORS,
      404: NO_LISTING_OF_YOURS,
      412: 'If-Match names a version the listing is no longer at: read it again and retry with its ETag',
    },
  },
  {
    method: 'delete',
    path: '/api/products/{productId}',
    operationId: 'withdrawListing',
    summary: 'Withdraw your listing (relist it with POST …/relist)',
    description:
      'Takes the listing off every agent-facing surface (search, feed, sitemap, details for others) and out of ' +
      'checkout and new quote requests; open quotes and orders keep it, and you still read and change it. ' +
      'Nothing is deleted: POST /api/products/{productId}/relist puts it back. Withdrawing a withdrawn listing ' +
      'answers it unchanged. Optional If-Match as for PUT. Emits ListingWithdrawn.',
    tags: ['listings'],
    auth: 'api_key',
    pathParameters: productIdParams,
    responses: {
      200: { description: 'The listing, status withdrawn', schema: sellerListingOutput },
      401: SELLER_ERRORS[401],
      403: SELLER_ERRORS[403],
      404: NO_LISTING_OF_YOURS,
      412: 'If-Match names a version the listing is no longer at',
    },
  },
  {
    method: 'post',
    path: '/api/products/{productId}/relist',
    operationId: 'relistListing',
    summary: 'Put your withdrawn listing back on sale',
    description:
      'Undoes DELETE: the listing is back where its promotePublicly puts it. An availability confirmation; a ' +
      'listing that is not withdrawn is answered unchanged. Optional If-Match as for PUT. Emits ListingRelisted.',
    tags: ['listings'],
    auth: 'api_key',
    pathParameters: productIdParams,
    responses: {
      200: { description: 'The listing, listed again', schema: sellerListingOutput },
      401: SELLER_ERRORS[401],
      403: SELLER_ERRORS[403],
      404: NO_LISTING_OF_YOURS,
      412: 'If-Match names a version the listing is no longer at',
    },
  },
  {
    method: 'patch',
    path: '/api/products/{productId}/quantity',
    operationId: 'setListingQuantity',
    summary: 'Set the stock of your listing; 0 marks it sold out',
    description:
      'Counts as an availability confirmation. Optional If-Match as for PUT (412 when stale); the answer ' +
      'carries the new ETag.',
    tags: ['listings'],
    auth: 'api_key',
    pathParameters: productIdParams,
    body: listingQuantityBodySchema,
    responses: {
      200: { description: 'The listing with its new stock and version', schema: sellerListingOutput },
      ...SELLER_ERRORS,
      404: NO_LISTING_OF_YOURS,
      412: 'If-Match names a version the listing is no longer at',
    },
  },
  {
    method: 'put',
    path: '/api/products/{productId}/shipping',
    operationId: 'setListingShipping',
    summary: 'Set the freight terms of your listing',
    description:
      'included, flat_per_order (cents per order), per_unit (cents per unit), buyer_pickup (shipFromRegion) or ' +
      'quoted_on_request (checkout escalates to a quote with the destination). Checkouts, previews and orders ' +
      'show freight apart from goods. The same terms again change nothing. POST and PUT /api/products take the ' +
      'same terms as shipping. Optional If-Match as for PUT: 412 when the listing moved on, and without it the ' +
      'terms apply to whatever version there is (no 428). The twin of set_listing_shipping.',
    tags: ['listings'],
    auth: 'api_key',
    pathParameters: productIdParams,
    body: listingShippingBodySchema,
    responses: {
      200: { description: 'The listing with its freight terms and version', schema: sellerListingOutput },
      ...SELLER_ERRORS,
      404: NO_LISTING_OF_YOURS,
      412: 'If-Match names a version the listing is no longer at',
    },
  },
  {
    method: 'post',
    path: '/api/products/bulk-update-price',
    operationId: 'bulkUpdatePrice',
    summary: 'Change the price of up to 200 of your listings',
    description:
      'The price modes of bulk_update_listings: price_set (value in cents), price_percent_increase, ' +
      'price_percent_decrease (value in percent). Listings of other sellers, missing ones and changes that ' +
      'would break a rule are reported in failures and left untouched.',
    tags: ['listings'],
    auth: 'api_key',
    body: bulkUpdatePriceBodySchema,
    responses: {
      200: { description: 'What changed and what did not', schema: bulkUpdateListingsOutput },
      ...SELLER_ERRORS,
    },
  },
  {
    method: 'post',
    path: '/api/products/bulk-update-moq',
    operationId: 'bulkUpdateMoq',
    summary: 'Set the minimum order quantity of up to 200 of your listings',
    description: 'Mode moq_set of bulk_update_listings; failures as for prices.',
    tags: ['listings'],
    auth: 'api_key',
    body: bulkUpdateMoqBodySchema,
    responses: {
      200: { description: 'What changed and what did not', schema: bulkUpdateListingsOutput },
      ...SELLER_ERRORS,
    },
  },
];
