import { listingV1 } from '@marketplace/proto';
import type { GrpcService } from '@marketplace/rpc';
import { fromActorMessage, toListingMessage } from '../adapters/listing-proto.mapper.js';
import type { CreatedListing, CreateListingInput } from '../application/create-listing.js';
import type { ListingDraft } from '../domain/listing.commands.js';

/** The application functions the gRPC API exposes. */
export interface ListingApplication {
  createListing(input: CreateListingInput): Promise<CreatedListing>;
}

/** Proto optional fields arrive as undefined when absent, which is how the draft marks "take the default". */
const draftOf = (draft: listingV1.ListingDraft | undefined): ListingDraft =>
  draft === undefined
    ? { name: '', description: '' }
    : {
        name: draft.name,
        description: draft.description,
        sku: draft.sku,
        category: draft.category,
        condition: draft.condition,
        priceCents: draft.priceCents,
        quantity: draft.quantity,
        minOrderQuantity: draft.minOrderQuantity,
        minQuoteQuantity: draft.minQuoteQuantity,
        brand: draft.brand,
        imageUrl: draft.imageUrl,
        galleryImageUrls: draft.galleryImageUrls,
        originalRetailPriceCents: draft.originalRetailPriceCents,
        instantCheckout: draft.instantCheckout,
        promotePublicly: draft.promotePublicly,
      };

/** ListingService over gRPC: maps messages to application inputs and back; AppErrors become statuses in rpc. */
export const listingGrpcService = (
  application: ListingApplication,
): GrpcService<listingV1.ListingServiceDefinition> => ({
  definition: listingV1.ListingServiceDefinition,
  implementation: {
    async createListing(request, context) {
      const { listing, version } = await application.createListing({
        sellerAccountId: request.sellerAccountId,
        draft: draftOf(request.draft),
        actor: fromActorMessage(request.actor),
        correlationId: request.correlationId === '' ? undefined : request.correlationId,
        // The caller's trace context travels on to the events (and from them to the log's headers).
        traceparent: context.metadata.get('traceparent'),
      });
      return { listing: toListingMessage(listing, version) };
    },
  },
});
