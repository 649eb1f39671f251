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
import { parseOrThrow } from '../schemas/validate.js';
import { requestIdOf } from '../request-log.js';

/** Spec 2.4 field names to the listing service's draft; dollars become cents, `null` means not sent. */
export const listingDraftOf = (body: CreateListingBody): listingV1.ListingDraft => ({
  name: body.name,
  description: body.description,
  sku: body.sku ?? undefined,
  category: body.category ?? undefined,
  condition: body.condition ?? undefined,
  priceCents: body.price == null ? undefined : dollarsToCents(body.price),
  quantity: body.quantity ?? undefined,
  minOrderQuantity: body.minOrderQuantity ?? undefined,
  minQuoteQuantity: body.minQuoteQuantity ?? undefined,
  brand: body.brand ?? undefined,
  imageUrl: body.imageUrl ?? undefined,
  galleryImageUrls: body.galleryImageUrls ?? [],
  promotePublicly: body.promotePublicly ?? false,
  originalRetailPriceCents:
    body.originalRetailPrice == null ? undefined : dollarsToCents(body.originalRetailPrice),
  instantCheckout: body.instantCheckout ?? false,
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
  return router;
};
