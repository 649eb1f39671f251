import type { listingV1 } from '@marketplace/proto';
import { forbidden } from '@marketplace/platform';
import type { ListingClient } from '../clients/listing.client.js';
import type { Principal } from '../domain/account.js';
import type { ProductDetails, ProductViews } from './product.views.js';

/** Seller commands shared by REST and, later, the MCP tools. */
export class ListingCommands {
  constructor(
    private readonly listing: ListingClient,
    private readonly views: ProductViews,
  ) {}

  /** Publishes a new listing for the calling seller; buyers are refused. */
  async create(
    seller: Principal,
    draft: listingV1.ListingDraft,
    correlationId: string,
  ): Promise<ProductDetails> {
    if (seller.role !== 'seller') throw forbidden('only seller accounts can publish listings');
    const listing = await this.listing.createListing({
      actor: { kind: 'seller', id: String(seller.accountId) },
      sellerAccountId: seller.accountId,
      draft,
      correlationId,
    });
    return this.views.detailsOfListing(listing);
  }
}
