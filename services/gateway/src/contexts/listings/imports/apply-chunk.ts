import { bulkAnswerOf, bulkItemsOf, bulkModeOf } from '../bulk-upsert.js';
import { listingDraftOf } from '../create-listing.schema.js';
import type { ListingClient } from '../listing.client.js';
import type { ApplyChunk } from './import.ports.js';

/**
 * A chunk goes through the bulk upsert exactly as POST /api/products/bulk sends it, as the seller who uploaded
 * the file (docs/imports.md): each row is checked as the body of POST /api/products, then upserted.
 */
export const applyChunkVia =
  (listing: Pick<ListingClient, 'bulkUpsertListings'>): ApplyChunk =>
  async ({ sellerAccountId, mode, items, idempotencyKey, correlationId }) => {
    const { sent, refused } = bulkItemsOf(items, listingDraftOf);
    const { outcomes } =
      sent.length === 0
        ? { outcomes: [] }
        : await listing.bulkUpsertListings({
            actor: { kind: 'seller', id: String(sellerAccountId) },
            sellerAccountId,
            mode: bulkModeOf(mode),
            items: sent,
            // The key is derived from the import and the chunk, whose rows never change: no other body can
            // come with it, and a chunk recorded before refused items were bound to keys still replays.
            refusedItemsDigest: '',
            correlationId,
            idempotencyKey,
          });
    return bulkAnswerOf(outcomes, refused);
  };
