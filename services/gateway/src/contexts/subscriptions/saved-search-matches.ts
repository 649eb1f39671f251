import type { DeliveredMessage, EventLog, LogConsumer } from '@marketplace/eventlog';
import { eachMessage, topicOf } from '@marketplace/eventlog';
import type { Logger } from '@marketplace/platform';
import { subscriptionV1 } from '@marketplace/proto';
import { savedSearchResourceUri } from './subscription.commands.js';

/** The subscription service's events (key: the aggregate id); its SavedSearchesMatched events are what we read. */
export const SUBSCRIPTION_TOPIC = topicOf('subscription');

/** The CloudEvents type of a SavedSearchesMatched message: the others are skipped without decoding. */
const MATCHED_TYPE = `${SUBSCRIPTION_TOPIC}.SavedSearchesMatched`;

/**
 * The resources (marketplace://subscriptions/{id}) a message says gained a listing, or none: the other events of
 * the topic, and bytes this version cannot read (logged, skipped: a notification is a hint, the resource is the
 * truth).
 */
export const updatedResourcesOf = (message: Pick<DeliveredMessage, 'headers' | 'value'>): string[] => {
  const type = message.headers['ce_type'];
  if (type !== undefined && type !== MATCHED_TYPE) return [];
  const event = subscriptionV1.SubscriptionEvent.decode(message.value);
  if (event.payload?.$case !== 'savedSearchesMatched') return [];
  return event.payload.value.subscriptionIds.map(savedSearchResourceUri);
};

export interface SavedSearchMatchFeedOptions {
  readonly log: EventLog;
  /** Called with the resource URIs of each match, as it arrives. */
  readonly onUpdated: (uris: readonly string[]) => void;
  readonly logger: Logger;
}

/**
 * Follows the saved searches' matches on the event log (docs/agents.md, "MCP resource subscriptions") for the
 * MCP sessions of this replica: each replica holds its own sessions, so each needs every match, from now on (the
 * sessions of a previous run are gone, and their subscriptions with them). A follower, not a consumer group of
 * the replica's own: it stores no position, so a restart leaves nothing behind in the log.
 */
export const startSavedSearchMatchFeed = (options: SavedSearchMatchFeedOptions): Promise<LogConsumer> => {
  const logger = options.logger.child({ component: 'saved-search-match-feed' });
  return options.log.follow({
    topic: SUBSCRIPTION_TOPIC,
    handler: eachMessage(async (message) => {
      let uris: string[];
      try {
        uris = updatedResourcesOf(message);
      } catch (error) {
        logger.warn({ err: error, offset: message.offset }, 'skipped an unreadable subscription event');
        return;
      }
      if (uris.length > 0) options.onUpdated(uris);
    }),
  });
};
