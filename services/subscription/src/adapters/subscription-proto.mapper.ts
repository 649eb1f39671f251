import { mailboxOf } from '@marketplace/platform';
import type { subscriptionV1 } from '@marketplace/proto';
import { isCategory, isCondition } from '@marketplace/vocabulary';
import type { Channel, SavedSearchQuery, Subscription } from '../domain/subscription.js';

/** Domain values ⇄ protobuf messages, shared by the event codec and the gRPC transport. */

/** `unconfirmed`: in answers, the mailboxes not confirmed yet (events carry no such state). */
export const toChannelMessage = (
  channel: Channel,
  unconfirmed: ReadonlySet<string> = new Set(),
): subscriptionV1.Channel => {
  switch (channel.type) {
    case 'webhook':
      return { kind: { $case: 'webhook', value: { url: channel.url } } };
    case 'email':
      return {
        kind: {
          $case: 'email',
          value: { email: channel.email, pendingConfirmation: unconfirmed.has(mailboxOf(channel.email)) },
        },
      };
    case 'mcp_resource':
      return { kind: { $case: 'mcpResource', value: {} } };
  }
};

/**
 * A channel message as the loose object validation reads (`{type, url}`...), so the service's rules name the
 * offending field whatever transport the channel came through. An empty message has no type.
 */
export const channelDraftOf = (channel: subscriptionV1.Channel): Record<string, unknown> => {
  switch (channel.kind?.$case) {
    case 'webhook':
      return { type: 'webhook', url: channel.kind.value.url };
    case 'email':
      return { type: 'email', email: channel.kind.value.email };
    case 'mcpResource':
      return { type: 'mcp_resource' };
    case undefined:
      return {};
  }
};

const toQueryMessage = (query: SavedSearchQuery): subscriptionV1.SavedSearchQuery => ({
  category: query.category,
  condition: query.condition,
  search: query.search,
  minPriceCents: query.minPriceCents,
  maxPriceCents: query.maxPriceCents,
  minQuantity: query.minQuantity,
  sellerCountry: query.sellerCountry,
  moqMin: query.moqRange?.min,
  moqMax: query.moqRange?.max,
  bulkDealsOnly: query.bulkDealsOnly,
  originalJson: JSON.stringify(query.original),
});

const fromQueryMessage = (message: subscriptionV1.SavedSearchQuery | undefined): SavedSearchQuery => {
  if (message === undefined) throw new Error('Subscription without a query');
  const { category, condition, moqMin, moqMax } = message;
  if (category !== undefined && !isCategory(category)) throw new Error(`unknown category ${category}`);
  if (condition !== undefined && !isCondition(condition)) throw new Error(`unknown condition ${condition}`);
  const original: unknown = JSON.parse(message.originalJson || '{}');
  return {
    ...(category === undefined ? {} : { category }),
    ...(condition === undefined ? {} : { condition }),
    ...(message.search === undefined ? {} : { search: message.search }),
    ...(message.minPriceCents === undefined ? {} : { minPriceCents: message.minPriceCents }),
    ...(message.maxPriceCents === undefined ? {} : { maxPriceCents: message.maxPriceCents }),
    ...(message.minQuantity === undefined ? {} : { minQuantity: message.minQuantity }),
    ...(message.sellerCountry === undefined ? {} : { sellerCountry: message.sellerCountry }),
    ...(moqMin === undefined && moqMax === undefined
      ? {}
      : {
          moqRange: {
            ...(moqMin === undefined ? {} : { min: moqMin }),
            ...(moqMax === undefined ? {} : { max: moqMax }),
          },
        }),
    bulkDealsOnly: message.bulkDealsOnly,
    original: typeof original === 'object' && original !== null ? (original as Record<string, unknown>) : {},
  };
};

const fromChannelMessage = (channel: subscriptionV1.Channel): Channel => {
  switch (channel.kind?.$case) {
    case 'webhook':
      return { type: 'webhook', url: channel.kind.value.url };
    case 'email':
      return { type: 'email', email: channel.kind.value.email };
    case 'mcpResource':
      return { type: 'mcp_resource' };
    case undefined:
      throw new Error('a channel without a kind (written by a newer version?)');
  }
};

export const toSubscriptionMessage = (
  subscription: Subscription,
  unconfirmed: ReadonlySet<string> = new Set(),
): subscriptionV1.Subscription => ({
  subscriptionId: subscription.subscriptionId,
  ownerAccountId: subscription.ownerAccountId ?? 0,
  query: toQueryMessage(subscription.query),
  channels: subscription.channels.map((channel) => toChannelMessage(channel, unconfirmed)),
  createdAtMs: subscription.createdAt,
});

export const fromSubscriptionMessage = (message: subscriptionV1.Subscription): Subscription => ({
  subscriptionId: message.subscriptionId,
  ...(message.ownerAccountId === 0 ? {} : { ownerAccountId: message.ownerAccountId }),
  query: fromQueryMessage(message.query),
  channels: message.channels.map(fromChannelMessage),
  createdAt: message.createdAtMs,
});
