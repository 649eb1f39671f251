import { describe, expect, it } from '@jest/globals';
import type { DeliveredMessage, EventLog, ConsumeOptions, FollowOptions } from '@marketplace/eventlog';
import { namespacedEventLog } from '../src/namespaced-event-log.js';

/** A recording double of the port: enough to see which physical topics the decorator uses. */
const recordingLog = () => {
  const published: string[] = [];
  const subscriptions: (ConsumeOptions | FollowOptions)[] = [];
  const deletedGroups: string[] = [];
  const log: EventLog = {
    publish: async (topic) => {
      published.push(topic);
    },
    consume: async (options) => {
      subscriptions.push(options);
      return { close: async () => undefined };
    },
    follow: async (options) => {
      subscriptions.push(options);
      return { close: async () => undefined };
    },
    deleteGroup: async (topic, group) => {
      deletedGroups.push(`${topic} ${group}`);
    },
    close: async () => undefined,
  };
  return { log, published, subscriptions, deletedGroups };
};

describe('namespacedEventLog', () => {
  it('prefixes topics on publish and subscribe, and hands the logical topic to handlers', async () => {
    const { log, published, subscriptions } = recordingLog();
    const namespaced = namespacedEventLog(log, 'staging');
    await namespaced.publish('marketplace.listing.v1', []);
    const seen: string[] = [];
    await namespaced.consume({
      topic: 'marketplace.listing.v1',
      group: 'catalog',
      handler: async (batch) => {
        seen.push(batch.topic, ...batch.messages.map((message) => message.topic));
      },
    });
    expect(published).toEqual(['staging.marketplace.listing.v1']);
    expect(subscriptions[0]?.topic).toBe('staging.marketplace.listing.v1');
    const delivered: DeliveredMessage = {
      topic: 'staging.marketplace.listing.v1',
      partition: 0,
      offset: '1',
      key: 'product_1',
      value: new Uint8Array(),
      headers: {},
    };
    await subscriptions[0]?.handler({
      topic: 'staging.marketplace.listing.v1',
      partition: 0,
      messages: [delivered],
    });
    expect(seen).toEqual(['marketplace.listing.v1', 'marketplace.listing.v1']);
  });

  it('prefixes the topic of a group it deletes', async () => {
    const { log, deletedGroups } = recordingLog();
    await namespacedEventLog(log, 'staging').deleteGroup('marketplace.listing.v1', 'catalog');
    expect(deletedGroups).toEqual(['staging.marketplace.listing.v1 catalog']);
  });

  it('prefixes the topic of a follower, and hands it the logical topic', async () => {
    const { log, subscriptions } = recordingLog();
    const seen: string[] = [];
    await namespacedEventLog(log, 'staging').follow({
      topic: 'marketplace.subscription.v1',
      handler: async (batch) => {
        seen.push(batch.topic, ...batch.messages.map((message) => message.topic));
      },
    });
    expect(subscriptions[0]?.topic).toBe('staging.marketplace.subscription.v1');
    await subscriptions[0]?.handler({
      topic: 'staging.marketplace.subscription.v1',
      partition: 0,
      messages: [
        {
          topic: 'staging.marketplace.subscription.v1',
          partition: 0,
          offset: '1',
          key: 'k',
          value: new Uint8Array(),
          headers: {},
        },
      ],
    });
    expect(seen).toEqual(['marketplace.subscription.v1', 'marketplace.subscription.v1']);
  });

  it('is the identity without a namespace', () => {
    const { log } = recordingLog();
    expect(namespacedEventLog(log, '')).toBe(log);
  });
});
