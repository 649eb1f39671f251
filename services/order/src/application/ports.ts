import type { ListingForCheckout } from '../domain/checkout.rules.js';

/** The listing service as checkout sees it: the source of truth for price, seller and stock. */
export interface Listings {
  /** Undefined when there is no such listing, or it is not publicly promoted (in-app only listings are not sold). */
  get(productId: string): Promise<ListingForCheckout | undefined>;
  /**
   * Takes the units out of stock; idempotent per reservation id. Throws AppError('conflict') when the stock is
   * insufficient.
   */
  reserve(productId: string, quantity: number, reservationId: string): Promise<void>;
  /** Puts a reservation's units back; releasing an unknown or released reservation changes nothing. */
  release(productId: string, reservationId: string): Promise<void>;
}

/** A quote request as checkout needs it. */
export interface QuoteForCheckout {
  readonly quoteRequestId: number;
  readonly productId: string;
  readonly quantity: number;
  /** Set once the seller accepted or countered; absent while pending and after a decline. */
  readonly agreedUnitPriceCents?: number | undefined;
  readonly buyerEmail: string;
  readonly buyerAccountId?: number | undefined;
}

export interface Quotes {
  get(quoteRequestId: number): Promise<QuoteForCheckout | undefined>;
}
