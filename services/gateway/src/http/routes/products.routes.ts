import { Router } from 'express';
import type { listingV1 } from '@marketplace/proto';
import { dollarsToCents } from '@marketplace/platform';
import type { IdentityService } from '../../application/identity.service.js';
import type { ListingCommands } from '../../application/listing.commands.js';
import { authenticate, authenticatedPrincipalOf } from '../auth.middleware.js';
import { jsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import type { Problems } from '../problem.js';
import type { CreateListingBody } from '../schemas/create-listing.schema.js';
import { createListingBodySchema } from '../schemas/create-listing.schema.js';
import type { UpdateListingBody } from '../schemas/update-listing.schema.js';
import {
  bulkUpdateMoqBodySchema,
  bulkUpdatePriceBodySchema,
  listingQuantityBodySchema,
  updateListingBodySchema,
} from '../schemas/update-listing.schema.js';
import { parseOrThrow } from '../schemas/validate.js';
import { requestIdOf } from '../request-log.js';

const centsOf = (dollars: number | null | undefined): number | undefined =>
  dollars == null ? undefined : dollarsToCents(dollars);

/** Spec 2.4 field names to the listing service's draft; dollars become cents, `null` means not sent. */
export const listingDraftOf = (body: CreateListingBody): listingV1.ListingDraft => ({
  name: body.name,
  description: body.description,
  sku: body.sku ?? undefined,
  category: body.category ?? undefined,
  condition: body.condition ?? undefined,
  priceCents: centsOf(body.price),
  quantity: body.quantity ?? undefined,
  minOrderQuantity: body.minOrderQuantity ?? undefined,
  minQuoteQuantity: body.minQuoteQuantity ?? undefined,
  brand: body.brand ?? undefined,
  imageUrl: body.imageUrl ?? undefined,
  galleryImageUrls: body.galleryImageUrls ?? [],
  promotePublicly: body.promotePublicly ?? false,
  originalRetailPriceCents: centsOf(body.originalRetailPrice),
  instantCheckout: body.instantCheckout ?? false,
});

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
});

/** Seller REST endpoints (spec 4.2). */
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
      const body = parseOrThrow(createListingBodySchema, req.body, 'listing');
      const created = await listings.create(
        authenticatedPrincipalOf(req),
        listingDraftOf(body),
        requestIdOf(req),
      );
      res.status(201).location(created.url).json(created);
    })
    .all(methodNotAllowed(problems, ['POST']));
  // Before /api/products/:productId, which would otherwise take "bulk-update-price" for a product id.
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
    .put(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const body = parseOrThrow(updateListingBodySchema, req.body, 'listing changes');
      const { productId = '' } = req.params;
      const seller = authenticatedPrincipalOf(req);
      res.json(await listings.update(seller, productId, listingChangesOf(body), requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['PUT']));
  router
    .route('/api/products/:productId/quantity')
    .patch(authenticate(identity, { required: true }), ...jsonBody(bodyLimitBytes), async (req, res) => {
      const { quantity } = parseOrThrow(listingQuantityBodySchema, req.body, 'quantity');
      const { productId = '' } = req.params;
      const seller = authenticatedPrincipalOf(req);
      res.json(await listings.setQuantity(seller, productId, quantity, requestIdOf(req)));
    })
    .all(methodNotAllowed(problems, ['PATCH']));
  return router;
};
