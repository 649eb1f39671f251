import type { Decider } from '@marketplace/eventsourcing';
import { AppError, conflict, notFound, validationError } from '@marketplace/platform';
import { LISTING_DEFAULTS } from '@marketplace/vocabulary';
import type {
  CreateListing,
  ListingCommand,
  RelistListing,
  ReleaseStock,
  ReserveStock,
  SetListingShipping,
  SetQuantity,
  UpdateListing,
  WithdrawListing,
} from './listing.commands.js';
import type {
  Listing,
  ListingCreated,
  ListingEvent,
  ListingQuantitySet,
  ListingRelisted,
  ListingShippingSet,
  ListingUpdated,
  ListingWithdrawn,
  StockReleased,
  StockReserved,
} from './listing.events.js';
import {
  generatedSku,
  restFieldName,
  validateListingChanges,
  validateShipping,
  validateStockQuantity,
} from './listing.rules.js';

/** A stock reservation of an order: kept after release, so a repeated reservation id never reserves again. */
export interface Reservation {
  readonly quantity: number;
  readonly released: boolean;
}

export type ListingState =
  | { readonly status: 'absent' }
  | {
      readonly status: 'listed';
      readonly listing: Listing;
      readonly reservations: ReadonlyMap<string, Reservation>;
    };

type ListedState = Extract<ListingState, { status: 'listed' }>;

/** Not enough units in stock for a reservation: the gRPC edge answers FAILED_PRECONDITION. */
export class InsufficientStockError extends AppError {
  constructor(
    readonly productId: string,
    readonly requested: number,
    readonly available: number,
  ) {
    super(
      'conflict',
      available === 0
        ? `${productId} is sold out: ${requested} units cannot be reserved`
        : `${productId} has ${available} units in stock: ${requested} cannot be reserved`,
    );
    this.name = 'InsufficientStockError';
  }
}

/** Order services name reservations by their own ids (an order id, a checkout line): short printable tokens. */
const RESERVATION_ID = /^[\x21-\x7e]{1,128}$/;

const noSuchListing = (productId: string): AppError => notFound(`listing ${productId} does not exist`);

const listed = (state: ListingState, productId: string): ListedState => {
  if (state.status !== 'listed') throw noSuchListing(productId);
  return state;
};

/**
 * Only the seller who published a listing may change it. Another seller's listing is not found, word for word
 * like a missing one: a listing that is not promoted is 404 to everyone but its seller, so no other answer may
 * tell that it exists (docs/specification.md, "Ids in paths").
 */
const ownedBy = (state: ListingState, productId: string, sellerAccountId: number): ListedState => {
  const current = listed(state, productId);
  if (current.listing.sellerAccountId !== sellerAccountId) {
    throw noSuchListing(productId);
  }
  return current;
};

const createListing = (command: CreateListing, state: ListingState): ListingCreated[] => {
  const { productId, accepted, hostedImages } = command.data;
  if (state.status !== 'absent') throw conflict(`listing ${productId} already exists`);
  const { sku, ...details } = accepted;
  const { now } = command.metadata;
  return [
    {
      type: 'ListingCreated',
      data: {
        listing: {
          ...details,
          ...hostedImages,
          productId,
          sku: sku ?? generatedSku(productId),
          currency: LISTING_DEFAULTS.currency,
          createdAt: now,
          updatedAt: now,
          confirmedAt: now,
        },
      },
    },
  ];
};

/** Field values are scalars, the gallery's list of paths or the freight terms (plain data). */
const sameValue = (a: unknown, b: unknown): boolean =>
  typeof a === 'object' && typeof b === 'object' && a !== null && b !== null
    ? JSON.stringify(a) === JSON.stringify(b)
    : a === b;

/** Always one event, changes or not: every update call is an availability confirmation (docs/specification.md, "Seller endpoints"). */
const updateListing = (command: UpdateListing, state: ListingState): ListingUpdated[] => {
  const { productId, sellerAccountId } = command.data;
  const { listing } = ownedBy(state, productId, sellerAccountId);
  const valid = validateListingChanges(listing, command.data.changes);
  const { hostedImages } = command.data;
  const changes = {
    ...valid,
    ...(valid.imageUrl === undefined ? {} : { imageUrl: hostedImages?.imageUrl ?? valid.imageUrl }),
    ...(valid.galleryImageUrls === undefined
      ? {}
      : { galleryImageUrls: hostedImages?.galleryImageUrls ?? valid.galleryImageUrls }),
  };
  const changed = Object.entries(changes).filter(
    ([field, value]) => value !== undefined && !sameValue(value, listing[field as keyof Listing]),
  );
  const { now } = command.metadata;
  return [
    {
      type: 'ListingUpdated',
      data: {
        listing: {
          ...listing,
          ...Object.fromEntries(changed),
          // The seller's own image replaces the shipped placeholder.
          ...(valid.imageUrl !== undefined && listing.imagePlaceholder === true
            ? { imagePlaceholder: false }
            : {}),
          updatedAt: now,
          confirmedAt: now,
        },
        changedFields: changed.map(([field]) => restFieldName(field)),
      },
    },
  ];
};

const setQuantity = (command: SetQuantity, state: ListingState): ListingQuantitySet[] => {
  const { productId, sellerAccountId } = command.data;
  const { listing } = ownedBy(state, productId, sellerAccountId);
  const quantity = validateStockQuantity(command.data.quantity);
  const { now } = command.metadata;
  return [
    {
      type: 'ListingQuantitySet',
      data: { listing: { ...listing, quantity, updatedAt: now, confirmedAt: now } },
    },
  ];
};

const sameShipping = (a: Listing['shipping'], b: Listing['shipping']): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

/**
 * Sets the freight terms; the same terms again change nothing (no event), so a repeated PUT never moves the
 * listing's version nor voids a buyer's confirmation token.
 */
const setListingShipping = (command: SetListingShipping, state: ListingState): ListingShippingSet[] => {
  const { productId, sellerAccountId } = command.data;
  const { listing } = ownedBy(state, productId, sellerAccountId);
  const shipping = validateShipping(command.data.shipping);
  if (sameShipping(listing.shipping, shipping)) return [];
  const { now } = command.metadata;
  return [{ type: 'ListingShippingSet', data: { listing: { ...listing, shipping, updatedAt: now } } }];
};

const checkReservationId = (reservationId: string): void => {
  if (!RESERVATION_ID.test(reservationId)) {
    const message = 'must be 1 to 128 printable characters without spaces';
    throw validationError(`reservationId ${message}`, [{ path: 'reservationId', message }]);
  }
};

/** A reservation taken before answers again with nothing new; a reused id with another quantity is a conflict. */
const reserveStock = (command: ReserveStock, state: ListingState): StockReserved[] => {
  const { productId, reservationId, quantity } = command.data;
  checkReservationId(reservationId);
  if (!Number.isSafeInteger(quantity) || quantity < 1) {
    throw validationError('quantity must be a whole number of at least 1', [
      { path: 'quantity', message: 'must be a whole number of at least 1' },
    ]);
  }
  const { listing, reservations } = listed(state, productId);
  const previous = reservations.get(reservationId);
  if (previous?.released === true) {
    throw conflict(`reservation ${reservationId} of ${productId} was released; reserve under a new id`);
  }
  if (previous !== undefined) {
    if (previous.quantity !== quantity) {
      throw conflict(
        `reservation ${reservationId} of ${productId} holds ${previous.quantity} units, not ${quantity}`,
      );
    }
    return [];
  }
  if (listing.withdrawnAt !== undefined) {
    throw conflict(`${productId} was withdrawn by its seller and cannot be bought`);
  }
  if (quantity > listing.quantity) throw new InsufficientStockError(productId, quantity, listing.quantity);
  const { now } = command.metadata;
  return [
    {
      type: 'StockReserved',
      data: {
        listing: { ...listing, quantity: listing.quantity - quantity, updatedAt: now },
        reservationId,
        quantity,
      },
    },
  ];
};

const releaseStock = (command: ReleaseStock, state: ListingState): StockReleased[] => {
  const { productId, reservationId } = command.data;
  checkReservationId(reservationId);
  const { listing, reservations } = listed(state, productId);
  const reservation = reservations.get(reservationId);
  if (reservation === undefined || reservation.released) return [];
  const { now } = command.metadata;
  return [
    {
      type: 'StockReleased',
      data: {
        listing: { ...listing, quantity: listing.quantity + reservation.quantity, updatedAt: now },
        reservationId,
        quantity: reservation.quantity,
      },
    },
  ];
};

/** Withdrawing a withdrawn listing changes nothing: a repeated DELETE answers the same listing. */
const withdrawListing = (command: WithdrawListing, state: ListingState): ListingWithdrawn[] => {
  const { productId, sellerAccountId } = command.data;
  const { listing } = ownedBy(state, productId, sellerAccountId);
  if (listing.withdrawnAt !== undefined) return [];
  const { now } = command.metadata;
  return [{ type: 'ListingWithdrawn', data: { listing: { ...listing, withdrawnAt: now, updatedAt: now } } }];
};

/** Relisting is an availability confirmation; a listing that is listed is answered unchanged. */
const relistListing = (command: RelistListing, state: ListingState): ListingRelisted[] => {
  const { productId, sellerAccountId } = command.data;
  const { listing } = ownedBy(state, productId, sellerAccountId);
  if (listing.withdrawnAt === undefined) return [];
  const { now } = command.metadata;
  const listed: Listing = { ...listing };
  delete (listed as { withdrawnAt?: number }).withdrawnAt;
  return [
    {
      type: 'ListingRelisted',
      data: { listing: { ...listed, updatedAt: now, confirmedAt: now } },
    },
  ];
};

const evolve = (state: ListingState, event: ListingEvent): ListingState => {
  if (event.type === 'ListingCreated') {
    return { status: 'listed', listing: event.data.listing, reservations: new Map() };
  }
  if (state.status !== 'listed') throw new Error(`${event.type} on a listing that was never created`);
  const { listing } = event.data;
  switch (event.type) {
    case 'ListingUpdated':
    case 'ListingQuantitySet':
    case 'ListingWithdrawn':
    case 'ListingRelisted':
    case 'ListingShippingSet':
      return { ...state, listing };
    case 'StockReserved':
    case 'StockReleased': {
      const reservations = new Map(state.reservations);
      reservations.set(event.data.reservationId, {
        quantity: event.data.quantity,
        released: event.type === 'StockReleased',
      });
      return { status: 'listed', listing, reservations };
    }
  }
};

export const listingDecider: Decider<ListingCommand, ListingEvent, ListingState> = {
  decide: (command, state) => {
    switch (command.type) {
      case 'CreateListing':
        return createListing(command, state);
      case 'UpdateListing':
        return updateListing(command, state);
      case 'SetQuantity':
        return setQuantity(command, state);
      case 'ReserveStock':
        return reserveStock(command, state);
      case 'ReleaseStock':
        return releaseStock(command, state);
      case 'WithdrawListing':
        return withdrawListing(command, state);
      case 'RelistListing':
        return relistListing(command, state);
      case 'SetListingShipping':
        return setListingShipping(command, state);
    }
  },
  evolve,
  initialState: () => ({ status: 'absent' }),
};
