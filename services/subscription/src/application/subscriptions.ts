import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database, Transaction } from '@marketplace/database';
import type { CommandContext, EventStore } from '@marketplace/eventsourcing';
import { handleCommand } from '@marketplace/eventsourcing';
import type { AddressPolicy } from '@marketplace/outbound-http';
import type { Clock } from '@marketplace/platform';
import { notFound, validationError } from '@marketplace/platform';
import { unsubscribeTokenOf, webhookSecretOf } from '../domain/webhook-signature.js';
import type {
  Subscription,
  SubscriptionCommand,
  SubscriptionDraft,
  SubscriptionEvent,
} from '../domain/subscription.js';
import type { SubscriptionState } from '../domain/subscription.decider.js';
import { signingGenerationsAt, subscriptionDecider } from '../domain/subscription.decider.js';
import type { EmailConfirmationDependencies } from './email-confirmation.js';
import { requestEmailConfirmations } from './email-confirmation.js';
import type { Delivery, ResourceMatch } from './ports.js';
import type { Deliveries } from './ports.js';
import type { SearchMatches } from './ports.js';
import type { SavedSearches } from './ports.js';

/** The stream type of subscriptions: selects the topic `marketplace.subscription.v1`. */
export const SUBSCRIPTION_STREAM_TYPE = 'subscription';

/** `sub_<24 hex>`: 96 random bits, so ids can be neither guessed nor enumerated. */
export const newSubscriptionId = (): string => `sub_${randomBytes(12).toString('hex')}`;

export interface SubscriptionDependencies extends EmailConfirmationDependencies {
  readonly db: Database;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly subscriptions: SavedSearches;
  readonly matching: SearchMatches;
  readonly deliveries: Deliveries;
  /** The marketplace's key: it signs unsubscribe tokens, and each subscription's webhook secret derives from it. */
  readonly signingSecret: string;
  /** Where webhooks may go: the delivery fetcher's policy, so that a target refused there is refused here too. */
  readonly webhookAddresses: AddressPolicy;
  /** Called after a commit that queued confirmation emails: the outgoing-mail worker sends them. */
  readonly wakeMailWorker?: () => void;
}

export interface SubscribeInput extends CommandContext {
  /** Undefined: an anonymous subscription (webhook and email channels only). */
  readonly ownerAccountId?: number;
  readonly draft: SubscriptionDraft;
}

export interface SubscribeResult {
  readonly subscription: Subscription;
  /** Ends the subscription without an account (also in every match email). */
  readonly unsubscribeToken: string;
  /** The subscription's webhook signing secret, shown once; undefined without a webhook channel. */
  readonly webhookSecret?: string;
}

export interface UnsubscribeInput extends CommandContext {
  readonly subscriptionId: string;
  readonly requesterAccountId?: number;
  readonly unsubscribeToken?: string;
}

export interface RotateWebhookSecretInput extends CommandContext {
  readonly subscriptionId: string;
  readonly requesterAccountId?: number;
  /** What an anonymous subscription's caller proves itself with: a secret that still signs its deliveries. */
  readonly currentSecret?: string;
}

export interface RotatedWebhookSecret {
  /** The new secret, shown once. */
  readonly webhookSecret: string;
  readonly generation: number;
  /** Until then deliveries carry the previous secret's signature too. */
  readonly previousValidUntil: number;
}

export interface SubscriptionResource {
  readonly subscription: Subscription;
  readonly matches: ResourceMatch[];
  readonly deliveries: Delivery[];
}

const tokensEqual = (presented: string, expected: string): boolean => {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** Decides a command and keeps the `subscriptions` table in step, in one transaction with the events. */
const execute = async (
  deps: SubscriptionDependencies,
  subscriptionId: string,
  command: Omit<SubscriptionCommand, 'metadata'>,
  context: CommandContext,
  /** More work in the same transaction, on the decided state. */
  alongside?: (tx: Transaction, state: SubscriptionState) => Promise<void>,
): Promise<SubscriptionState> =>
  deps.db.transaction(async (tx) => {
    const { events, state } = await handleCommand({
      store: deps.store,
      decider: subscriptionDecider,
      streamId: subscriptionId,
      streamType: SUBSCRIPTION_STREAM_TYPE,
      tx,
      // Rotations and deletions of one subscription may race: each decision is remade on the winner's state.
      retryOnConflict: 3,
      command: {
        ...command,
        metadata: {
          now: deps.clock.now(),
          actor: context.actor,
          correlationId: context.correlationId,
          traceparent: context.traceparent,
        },
      } as SubscriptionCommand,
    });
    for (const { type, data } of events) {
      const event = { type, data } as SubscriptionEvent;
      switch (event.type) {
        case 'SubscriptionCreated':
          await deps.subscriptions.insert(tx, event.data.subscription);
          break;
        case 'SubscriptionDeleted':
          await deps.subscriptions.markDeleted(tx, subscriptionId, event.data.deletedAt);
          break;
        case 'WebhookSecretRotated':
          await deps.subscriptions.rotateWebhookSecret(tx, subscriptionId, event.data);
          break;
      }
    }
    await alongside?.(tx, state);
    return state;
  });

/**
 * A webhook URL whose host is a non-public IP address (not allow-listed) can never be delivered to: refused
 * when subscribing, naming the channel. A host name is judged at each delivery, as it resolves then.
 */
const refuseNonPublicWebhookTargets = (policy: AddressPolicy, draft: SubscriptionDraft): void => {
  const violations = draft.channels.flatMap((channel, index) => {
    if (typeof channel !== 'object' || channel === null) return [];
    const { type, url } = channel as { type?: unknown; url?: unknown };
    if (type !== 'webhook' || typeof url !== 'string' || !URL.canParse(url)) return [];
    return policy.refusesLiteralHost(new URL(url).hostname)
      ? [
          {
            path: `channels/${index}/url`,
            message: 'must not point at a private or otherwise non-public address',
          },
        ]
      : [];
  });
  if (violations.length > 0) {
    throw validationError(
      `invalid subscription: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
      violations,
    );
  }
};

/**
 * subscribe_to_query: validates, records the subscription and answers it with its unsubscribe token and, with a
 * webhook channel, its webhook signing secret.
 */
export const subscribe = async (
  deps: SubscriptionDependencies,
  input: SubscribeInput,
): Promise<SubscribeResult> => {
  refuseNonPublicWebhookTargets(deps.webhookAddresses, input.draft);
  const subscriptionId = newSubscriptionId();
  let confirmationsQueued = 0;
  const state = await execute(
    deps,
    subscriptionId,
    {
      type: 'Subscribe',
      data: {
        subscriptionId,
        ...(input.ownerAccountId === undefined ? {} : { ownerAccountId: input.ownerAccountId }),
        draft: input.draft,
      },
    },
    input,
    // Double opt-in (docs/security.md, API6): the email channels' unconfirmed mailboxes are asked to confirm,
    // by mail queued with the subscription, so that both commit or neither.
    async (tx, decided) => {
      if (decided.status !== 'active') return;
      const emails = decided.subscription.channels.flatMap((channel) =>
        channel.type === 'email' ? [channel.email] : [],
      );
      confirmationsQueued = await requestEmailConfirmations(deps, tx, emails, input);
    },
  );
  if (confirmationsQueued > 0) deps.wakeMailWorker?.();
  if (state.status !== 'active') throw new Error(`Subscribe left ${subscriptionId} without a subscription`);
  const hasWebhook = state.subscription.channels.some((channel) => channel.type === 'webhook');
  return {
    subscription: state.subscription,
    unsubscribeToken: unsubscribeTokenOf(deps.signingSecret, subscriptionId),
    ...(hasWebhook ? { webhookSecret: webhookSecretOf(deps.signingSecret, subscriptionId) } : {}),
  };
};

/** Ends a subscription: its owner, or whoever holds its unsubscribe token. Anyone else gets 404. */
export const unsubscribe = async (deps: SubscriptionDependencies, input: UnsubscribeInput): Promise<void> => {
  const { subscriptionId, unsubscribeToken } = input;
  const unsubscribeTokenValid =
    unsubscribeToken !== undefined &&
    unsubscribeToken !== '' &&
    tokensEqual(unsubscribeToken, unsubscribeTokenOf(deps.signingSecret, subscriptionId));
  await execute(
    deps,
    subscriptionId,
    {
      type: 'Unsubscribe',
      data: {
        subscriptionId,
        ...(input.requesterAccountId === undefined ? {} : { requesterAccountId: input.requesterAccountId }),
        unsubscribeTokenValid,
      },
    },
    input,
  );
};

/**
 * Issues a subscription's next webhook secret (docs/security.md, API2) to its owner, or to the holder of a secret
 * that still signs its deliveries. The new one signs at once; the previous one beside it for 24 hours.
 */
export const rotateWebhookSecret = async (
  deps: SubscriptionDependencies,
  input: RotateWebhookSecretInput,
): Promise<RotatedWebhookSecret> => {
  const { subscriptionId, currentSecret } = input;
  let presentedSecretGeneration: number | undefined;
  if (currentSecret !== undefined && currentSecret !== '') {
    const secret = await deps.subscriptions.webhookSecretOf(deps.db, subscriptionId);
    presentedSecretGeneration = (secret ? signingGenerationsAt(secret, deps.clock.now()) : []).find(
      (generation) =>
        tokensEqual(currentSecret, webhookSecretOf(deps.signingSecret, subscriptionId, generation)),
    );
  }
  const state = await execute(
    deps,
    subscriptionId,
    {
      type: 'RotateWebhookSecret',
      data: {
        subscriptionId,
        ...(input.requesterAccountId === undefined ? {} : { requesterAccountId: input.requesterAccountId }),
        ...(presentedSecretGeneration === undefined ? {} : { presentedSecretGeneration }),
      },
    },
    input,
  );
  if (state.status !== 'active' || state.webhookSecret.previousValidUntil === undefined) {
    throw new Error(`RotateWebhookSecret left ${subscriptionId} without a rotated secret`);
  }
  const { generation, previousValidUntil } = state.webhookSecret;
  return {
    webhookSecret: webhookSecretOf(deps.signingSecret, subscriptionId, generation),
    generation,
    previousValidUntil,
  };
};

export const listSubscriptions = (
  deps: SubscriptionDependencies,
  ownerAccountId: number,
): Promise<Subscription[]> => deps.subscriptions.listOwned(deps.db, ownerAccountId);

/** The owner's view of one subscription: its recent matches and the state of its deliveries. */
export const subscriptionResource = async (
  deps: SubscriptionDependencies,
  subscriptionId: string,
  ownerAccountId: number,
): Promise<SubscriptionResource> => {
  const subscription = await deps.subscriptions.findOwned(deps.db, subscriptionId, ownerAccountId);
  if (!subscription) throw notFound(`subscription ${subscriptionId} not found`);
  const [matches, deliveries] = await Promise.all([
    deps.matching.recentMatches(deps.db, subscriptionId),
    deps.deliveries.recent(deps.db, subscriptionId),
  ]);
  return { subscription, matches, deliveries };
};
