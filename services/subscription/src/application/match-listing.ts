import type { Queryable } from '@marketplace/database';
import type { EventStore } from '@marketplace/eventsourcing';
import { mailboxOf, newEventId } from '@marketplace/platform';
import type { SavedSearchesMatched } from '../domain/match-notification.js';
import { matchedProductOf, matchPayloadOf, matchStreamIdOf } from '../domain/match-notification.js';
import type { ListingFacts } from '../domain/saved-search.match.js';
import type { Subscription } from '../domain/subscription.js';
import { listingTermsOf, matchesQuery } from '../domain/saved-search.match.js';
import type { ConfirmedMailboxes, NewDelivery, NewListing } from './ports.js';
import type { Deliveries } from './ports.js';
import type { SearchMatches } from './ports.js';
import type { SavedSearches } from './ports.js';
import { SUBSCRIPTION_STREAM_TYPE } from './subscriptions.js';

const MATCHER_ACTOR = { kind: 'system', id: 'saved-search-matcher' } as const;

/**
 * Delivery ids: the notification event's id (a UUIDv7, like every event id: docs/specification.md, "Money, units and ids"),
 * which is the payload's `id` and the X-Marketplace-Delivery header, stable across retries.
 */
export const newDeliveryId = (): string => newEventId();

/**
 * How long a listing waits for its seller's account event before `sellerCountry` filters give up on it: the
 * two come through different topics, so the listing may arrive first.
 */
export const SELLER_WAIT_MS = 30_000;

export class SellerNotYetKnownError extends Error {
  constructor(accountId: number) {
    super(
      `seller ${accountId} is not known yet; the listing is matched again once the account event arrived`,
    );
    this.name = 'SellerNotYetKnownError';
  }
}

export interface MatchDependencies {
  readonly subscriptions: SavedSearches;
  readonly matching: SearchMatches;
  readonly deliveries: Deliveries;
  readonly mailboxes: ConfirmedMailboxes;
  /** Where the SavedSearchesMatched event of the resources that gained the listing is appended. */
  readonly store: EventStore;
  /** `{base_url}` of product links in notifications. */
  readonly publicBaseUrl: string;
}

/**
 * Matches new listings against the saved searches, in the transaction that records their events as applied:
 * candidates come from the match index (one statement for all the listings), the other filters run on them, and
 * each subscription that matches a listing for the first time gets its webhook and email deliveries enqueued and
 * its resource updated, the resources that gained the listing in one SavedSearchesMatched event (for the MCP
 * sessions subscribed to them). Returns how many deliveries were enqueued.
 */
export const matchNewListings = async (
  deps: MatchDependencies,
  tx: Queryable,
  newListings: readonly NewListing[],
  now: number,
): Promise<number> => {
  const shown = newListings.filter(({ listing }) => listing.promotePublicly);
  if (shown.length === 0) return 0;
  const candidates = await deps.subscriptions.candidates(
    tx,
    shown.map(({ listing }) => listing),
  );
  let enqueued = 0;
  for (const [at, { listing }] of shown.entries()) {
    const some = candidates[at]!;
    if (some.length > 0) enqueued += await matchCandidates(deps, tx, listing, some, now);
  }
  return enqueued;
};

/** The rest of matching one listing, once the match index answered its candidates (some). */
const matchCandidates = async (
  deps: MatchDependencies,
  tx: Queryable,
  listing: NewListing['listing'],
  candidates: readonly Subscription[],
  now: number,
): Promise<number> => {
  let sellerCountry: string | undefined;
  if (candidates.some((subscription) => subscription.query.sellerCountry !== undefined)) {
    sellerCountry = await deps.matching.sellerCountry(tx, listing.sellerAccountId);
    if (sellerCountry === undefined && now - listing.createdAt < SELLER_WAIT_MS) {
      throw new SellerNotYetKnownError(listing.sellerAccountId);
    }
  }
  const facts: ListingFacts = { ...listing, ...(sellerCountry === undefined ? {} : { sellerCountry }) };
  const terms = listingTermsOf(facts);
  const matched = candidates.filter((subscription) => matchesQuery(subscription.query, facts, terms));
  const firstTime = await deps.matching.recordNew(
    tx,
    listing.productId,
    matched.map((subscription) => subscription.subscriptionId),
    now,
  );
  const product = matchedProductOf(facts, deps.publicBaseUrl);
  // Double opt-in (docs/security.md, API6): no match is emailed to a mailbox its owner has not confirmed; the
  // match is not kept for later either (the resource and other channels still get it).
  const confirmed = await deps.mailboxes.confirmedAmong(
    tx,
    matched.flatMap((subscription) =>
      firstTime.has(subscription.subscriptionId)
        ? subscription.channels.flatMap((channel) =>
            channel.type === 'email' ? [mailboxOf(channel.email)] : [],
          )
        : [],
    ),
  );
  const deliveries: NewDelivery[] = [];
  const resources: string[] = [];
  for (const subscription of matched) {
    if (!firstTime.has(subscription.subscriptionId)) continue;
    subscription.channels.forEach((channel, channelIndex) => {
      if (channel.type === 'mcp_resource') {
        resources.push(subscription.subscriptionId);
        return;
      }
      if (channel.type === 'email' && !confirmed.has(mailboxOf(channel.email))) return;
      const deliveryId = newDeliveryId();
      deliveries.push({
        deliveryId,
        subscriptionId: subscription.subscriptionId,
        productId: listing.productId,
        channelIndex,
        channelType: channel.type,
        target: channel.type === 'webhook' ? channel.url : channel.email,
        body: JSON.stringify(matchPayloadOf(deliveryId, subscription, product, now)),
      });
    });
  }
  await deps.deliveries.enqueue(tx, deliveries, now);
  await deps.matching.addToResources(tx, resources, {
    productId: listing.productId,
    matchedAt: now,
    product,
  });
  if (resources.length > 0) {
    // One statement, only when a resource gained the listing: publications nobody watches cost nothing more.
    await deps.store.append<SavedSearchesMatched>(
      {
        streamId: matchStreamIdOf(listing.productId),
        streamType: SUBSCRIPTION_STREAM_TYPE,
        // A later event of the same listing (a redelivery is stopped by recordNew) follows whatever is there.
        expectedVersion: 'any',
        events: [
          {
            type: 'SavedSearchesMatched',
            data: { productId: listing.productId, subscriptionIds: resources, matchedAt: now },
          },
        ],
        metadata: { actor: MATCHER_ACTOR },
        now,
      },
      tx,
    );
  }
  return deliveries.length;
};
