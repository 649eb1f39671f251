import type { Decider } from '@marketplace/eventsourcing';
import { conflict, notFound } from '@marketplace/platform';
import type {
  RotateWebhookSecret,
  Subscribe,
  Subscription,
  SubscriptionCommand,
  SubscriptionCreated,
  SubscriptionDeleted,
  SubscriptionEvent,
  Unsubscribe,
  WebhookSecretRotated,
} from './subscription.js';
import { WEBHOOK_SECRET_OVERLAP_MS } from './subscription.js';
import { validateSubscriptionDraft } from './subscription.rules.js';

/** Which webhook secret signs: the generation, and until when the previous one signs too. */
export interface WebhookSecretState {
  readonly generation: number;
  readonly previousValidUntil?: number;
}

export type SubscriptionState =
  | { readonly status: 'absent' }
  | {
      readonly status: 'active' | 'deleted';
      readonly subscription: Subscription;
      readonly webhookSecret: WebhookSecretState;
    };

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

/** The secrets a delivery at `now` is signed with, newest first (docs/security.md, API2). */
export const signingGenerationsAt = (secret: WebhookSecretState, now: number): number[] =>
  secret.previousValidUntil !== undefined && now < secret.previousValidUntil && secret.generation > 0
    ? [secret.generation, secret.generation - 1]
    : [secret.generation];

/**
 * The owner, or the holder of a secret that still signs, gets a new secret; anyone else finds no subscription.
 * A subscription without a webhook channel has no secret to rotate (409).
 */
const rotateWebhookSecret = (
  command: RotateWebhookSecret,
  state: SubscriptionState,
): WebhookSecretRotated[] => {
  const { subscriptionId, requesterAccountId, presentedSecretGeneration } = command.data;
  const missing = notFound(`subscription ${subscriptionId} not found`);
  if (state.status !== 'active') throw missing;
  const { now } = command.metadata;
  const isOwner =
    state.subscription.ownerAccountId !== undefined &&
    state.subscription.ownerAccountId === requesterAccountId;
  const holdsSecret =
    presentedSecretGeneration !== undefined &&
    signingGenerationsAt(state.webhookSecret, now).includes(presentedSecretGeneration);
  if (!isOwner && !holdsSecret) throw missing;
  if (!state.subscription.channels.some((channel) => channel.type === 'webhook')) {
    throw conflict(`subscription ${subscriptionId} has no webhook channel, so no secret to rotate`);
  }
  return [
    {
      type: 'WebhookSecretRotated',
      data: {
        generation: state.webhookSecret.generation + 1,
        rotatedAt: now,
        previousValidUntil: now + WEBHOOK_SECRET_OVERLAP_MS,
      },
    },
  ];
};

export const subscriptionDecider: Decider<SubscriptionCommand, SubscriptionEvent, SubscriptionState> = {
  decide: (command, state) => {
    switch (command.type) {
      case 'Subscribe':
        return subscribe(command, state);
      case 'Unsubscribe':
        return unsubscribe(command, state);
      case 'RotateWebhookSecret':
        return rotateWebhookSecret(command, state);
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'SubscriptionCreated':
        return { status: 'active', subscription: event.data.subscription, webhookSecret: { generation: 0 } };
      case 'SubscriptionDeleted':
        return state.status === 'active' ? { ...state, status: 'deleted' } : state;
      case 'WebhookSecretRotated':
        return state.status === 'absent'
          ? state
          : {
              ...state,
              webhookSecret: {
                generation: event.data.generation,
                previousValidUntil: event.data.previousValidUntil,
              },
            };
    }
  },
  initialState: () => ({ status: 'absent' }),
};
