import { conflict, unavailable } from '@marketplace/platform';
import type { Listings, QuoteForCheckout, Quotes } from '../../src/application/ports.js';
import type { ListingForCheckout } from '../../src/domain/checkout.rules.js';

/**
 * The listing service's stock contract, in memory: reserve is idempotent per reservation id and never takes the
 * stock below zero; release puts a live reservation back once.
 */
export class InMemoryListings implements Listings {
  readonly listings = new Map<string, ListingForCheckout>();
  readonly reservations = new Map<string, { productId: string; quantity: number; released: boolean }>();
  /** Reservation ids whose reserve call fails as if the listing service were down. */
  readonly unavailableFor = new Set<string>();

  add(listing: Partial<ListingForCheckout> & { productId: string }): ListingForCheckout {
    const full: ListingForCheckout = {
      name: `Lot ${listing.productId}`,
      sellerAccountId: 7,
      priceCents: 1_000,
      currency: 'USD',
      quantity: 50,
      minOrderQuantity: 1,
      instantCheckout: true,
      ...listing,
    };
    this.listings.set(full.productId, full);
    return full;
  }

  stockOf(productId: string): number {
    return this.listings.get(productId)?.quantity ?? 0;
  }

  get(productId: string): Promise<ListingForCheckout | undefined> {
    return Promise.resolve(this.listings.get(productId));
  }

  reserve(productId: string, quantity: number, reservationId: string): Promise<void> {
    if (this.unavailableFor.has(reservationId)) return Promise.reject(unavailable('listing service down'));
    if (this.reservations.has(reservationId)) return Promise.resolve();
    const listing = this.listings.get(productId);
    if (!listing || listing.quantity < quantity) {
      return Promise.reject(conflict(`only ${listing?.quantity ?? 0} units of ${productId} are in stock`));
    }
    this.listings.set(productId, { ...listing, quantity: listing.quantity - quantity });
    this.reservations.set(reservationId, { productId, quantity, released: false });
    return Promise.resolve();
  }

  release(productId: string, reservationId: string): Promise<void> {
    const reservation = this.reservations.get(reservationId);
    const listing = this.listings.get(productId);
    if (reservation && !reservation.released && listing) {
      reservation.released = true;
      this.listings.set(productId, { ...listing, quantity: listing.quantity + reservation.quantity });
    }
    return Promise.resolve();
  }
}

export class InMemoryQuotes implements Quotes {
  readonly quotes = new Map<number, QuoteForCheckout>();

  get(quoteRequestId: number): Promise<QuoteForCheckout | undefined> {
    return Promise.resolve(this.quotes.get(quoteRequestId));
  }
}
