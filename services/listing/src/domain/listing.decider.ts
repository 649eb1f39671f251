import type { Decider } from '@marketplace/eventsourcing';
import { conflict } from '@marketplace/platform';
import { LISTING_DEFAULTS } from '@marketplace/vocabulary';
import type { CreateListing, ListingCommand } from './listing.commands.js';
import type { Listing, ListingCreated, ListingEvent } from './listing.events.js';
import { generatedSku, validateNewListing } from './listing.rules.js';

export type ListingState =
  { readonly status: 'absent' } | { readonly status: 'listed'; readonly listing: Listing };

const createListing = (command: CreateListing, state: ListingState): ListingCreated[] => {
  const { productId, sellerAccountId, draft, hostedImages } = command.data;
  if (state.status !== 'absent') throw conflict(`listing ${productId} already exists`);
  const { sku, ...details } = validateNewListing(sellerAccountId, draft);
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

export const listingDecider: Decider<ListingCommand, ListingEvent, ListingState> = {
  decide: (command, state) => {
    switch (command.type) {
      case 'CreateListing':
        return createListing(command, state);
    }
  },
  evolve: (_state, event) => {
    switch (event.type) {
      case 'ListingCreated':
        return { status: 'listed', listing: event.data.listing };
    }
  },
  initialState: () => ({ status: 'absent' }),
};
