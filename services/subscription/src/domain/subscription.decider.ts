import type { Decider } from '@marketplace/eventsourcing';
import { conflict, notFound } from '@marketplace/platform';
import type {
  Subscribe,
  Subscription,
  SubscriptionCommand,
  SubscriptionCreated,
  SubscriptionDeleted,
  SubscriptionEvent,
  Unsubscribe,
} from './subscription.js';
import { validateSubscriptionDraft } from './subscription.rules.js';

export type SubscriptionState =
  | { readonly status: 'absent' }
  | { readonly status: 'active'; readonly subscription: Subscription }
  | { readonly status: 'deleted'; readonly subscription: Subscription };

const subscribe = (command: Subscribe, state: SubscriptionState): SubscriptionCreated[] => {
  const { subscriptionId, ownerAccountId, draft } = command.data;
  if (state.status !== 'absent') throw conflict(`subscription ${subscriptionId} already exists`);
  const { query, channels } = validateSubscriptionDraft(draft, { anonymous: ownerAccountId === undefined });
  return [
    {
      type: 'SubscriptionCreated',
      data: {
        subscription: {
          subscriptionId,
          ...(ownerAccountId === undefined ? {} : { ownerAccountId }),
          query,
          channels,
          createdAt: command.metadata.now,
        },
      },
    },
  ];
};

/** Someone else's subscription is as absent as one that never existed: its id reveals nothing. */
const unsubscribe = (command: Unsubscribe, state: SubscriptionState): SubscriptionDeleted[] => {
  const { subscriptionId, requesterAccountId, unsubscribeTokenValid } = command.data;
  const missing = notFound(`subscription ${subscriptionId} not found`);
  if (state.status !== 'active') throw missing;
  const isOwner =
    state.subscription.ownerAccountId !== undefined &&
    state.subscription.ownerAccountId === requesterAccountId;
  if (!isOwner && !unsubscribeTokenValid) throw missing;
  return [{ type: 'SubscriptionDeleted', data: { deletedAt: command.metadata.now } }];
};

export const subscriptionDecider: Decider<SubscriptionCommand, SubscriptionEvent, SubscriptionState> = {
  decide: (command, state) => {
    switch (command.type) {
      case 'Subscribe':
        return subscribe(command, state);
      case 'Unsubscribe':
        return unsubscribe(command, state);
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'SubscriptionCreated':
        return { status: 'active', subscription: event.data.subscription };
      case 'SubscriptionDeleted':
        return state.status === 'active' ? { status: 'deleted', subscription: state.subscription } : state;
    }
  },
  initialState: () => ({ status: 'absent' }),
};
