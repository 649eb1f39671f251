import { unauthenticated, validationError } from '@marketplace/platform';
import type { subscriptionV1 } from '@marketplace/proto';
import { toIso } from '@marketplace/platform';
import type { SubscriptionClient } from './subscription.client.js';
import type { Principal } from '../../edge/account.js';
import { actorOf } from '../../edge/account.js';
import type {
  RotatedSecret,
  SubscribeInput,
  SubscribeOutput,
  SubscriptionResourceView,
  SubscriptionView,
} from './subscription.schema.js';

const RESOURCE_URI_PREFIX = 'marketplace://subscriptions/';

/** The MCP resource of a saved search: `marketplace://subscriptions/{id}`. */
export const savedSearchResourceUri = (subscriptionId: string): string =>
  `${RESOURCE_URI_PREFIX}${subscriptionId}`;

const isoOrNull = (epochMs: number): string | null => (epochMs > 0 ? toIso(epochMs) : null);

const channelDraftOf = (channel: SubscribeInput['channels'][number]): subscriptionV1.Channel => {
  switch (channel.type) {
    case 'webhook':
      return { kind: { $case: 'webhook', value: { url: channel.url } } };
    case 'email':
      return { kind: { $case: 'email', value: { email: channel.email, pendingConfirmation: false } } };
    case 'mcp_resource':
      return { kind: { $case: 'mcpResource', value: {} } };
  }
};

const channelViewOf = (channel: subscriptionV1.Channel): SubscriptionView['channels'][number] => {
  switch (channel.kind?.$case) {
    case 'webhook':
      return { type: 'webhook', url: channel.kind.value.url };
    case 'email':
      return {
        type: 'email',
        email: channel.kind.value.email,
        status: channel.kind.value.pendingConfirmation ? 'pending_confirmation' : 'active',
      };
    default:
      return { type: 'mcp_resource' };
  }
};

/** The addresses of a new saved search's email channels: what its per-mailbox rate limit counts. */
export const channelEmailsOf = (input: SubscribeInput): string[] =>
  input.channels.flatMap((channel) => (channel.type === 'email' ? [channel.email] : []));

/**
 * Saved searches for REST and the subscribe_to_query tool: keyed to the caller's account (API key or agent
 * token); anonymous callers may subscribe with webhook and email channels and end it with the unsubscribe
 * token. Reading, listing and deleting by account are the owner's only (anyone else: 404).
 */
export class SubscriptionCommands {
  constructor(
    private readonly subscriptions: SubscriptionClient,
    private readonly publicBaseUrl: string,
  ) {}

  resourceUri(subscriptionId: string): string {
    return savedSearchResourceUri(subscriptionId);
  }

  private view(subscription: subscriptionV1.Subscription): SubscriptionView {
    const id = subscription.subscriptionId;
    const owned = subscription.ownerAccountId > 0;
    return {
      id,
      query: JSON.parse(subscription.query?.originalJson || '{}') as Record<string, unknown>,
      channels: subscription.channels.map(channelViewOf),
      created_at: toIso(subscription.createdAtMs),
      resource_uri: owned ? this.resourceUri(id) : null,
      resource_url: owned ? `${this.publicBaseUrl}/api/mcp/resources/subscriptions/${id}` : null,
    };
  }

  async subscribe(
    caller: Principal | undefined,
    input: SubscribeInput,
    correlationId: string,
  ): Promise<SubscribeOutput> {
    const { subscription, unsubscribeToken, webhookSecret } = await this.subscriptions.subscribe({
      actor: actorOf(caller),
      ownerAccountId: caller?.accountId ?? 0,
      queryJson: JSON.stringify(input.query),
      channels: input.channels.map(channelDraftOf),
      correlationId,
    });
    if (!subscription) throw new Error('Subscribe answered without a subscription');
    return {
      ...this.view(subscription),
      unsubscribe_token: unsubscribeToken,
      webhook_secret: webhookSecret === '' ? null : webhookSecret,
    };
  }

  async list(caller: Principal | undefined): Promise<{ subscriptions: SubscriptionView[] }> {
    const owner = this.owner(caller);
    const subscriptions = await this.subscriptions.listSubscriptions({
      actor: actorOf(owner),
      ownerAccountId: owner.accountId,
    });
    return { subscriptions: subscriptions.map((subscription) => this.view(subscription)) };
  }

  /** The owner deletes with its credentials; anyone holding the unsubscribe token may too. */
  async delete(
    caller: Principal | undefined,
    subscriptionId: string,
    unsubscribeToken: string | undefined,
    correlationId: string,
  ): Promise<void> {
    if (!caller && unsubscribeToken === undefined) this.owner(caller);
    await this.subscriptions.deleteSubscription({
      actor: actorOf(caller),
      subscriptionId,
      ownerAccountId: caller?.accountId ?? 0,
      unsubscribeToken: unsubscribeToken ?? '',
      correlationId,
    });
  }

  /**
   * A new webhook secret, shown once (docs/security.md, API2): for the owner, or for the holder of a secret that
   * still signs the subscription's deliveries; anyone else gets 404. The previous secret signs beside it for 24 h.
   */
  async rotateSecret(
    caller: Principal | undefined,
    subscriptionId: string,
    currentSecret: string | undefined,
    correlationId: string,
  ): Promise<RotatedSecret> {
    if (!caller && currentSecret === undefined) this.owner(caller);
    const rotated = await this.subscriptions.rotateWebhookSecret({
      actor: actorOf(caller),
      subscriptionId,
      ownerAccountId: caller?.accountId ?? 0,
      currentSecret: currentSecret ?? '',
      correlationId,
    });
    return {
      id: subscriptionId,
      webhook_secret: rotated.webhookSecret,
      secret_generation: rotated.secretGeneration,
      previous_secret_valid_until: toIso(rotated.previousValidUntilMs),
    };
  }

  /**
   * The confirmation link of an email channel's address (double opt-in, docs/security.md, API6): anyone holding
   * the token may use it, once. Resolves to the mailbox confirmed.
   */
  async confirmEmail(token: string, correlationId: string): Promise<{ confirmed: true; mailbox: string }> {
    const { mailbox } = await this.subscriptions.confirmEmail({
      actor: actorOf(undefined),
      token,
      correlationId,
    });
    return { confirmed: true, mailbox };
  }

  /** GET /api/mcp/resources/subscriptions/{id} and marketplace://subscriptions/{id}. */
  async resource(caller: Principal | undefined, subscriptionId: string): Promise<SubscriptionResourceView> {
    const owner = this.owner(caller);
    const resource = await this.subscriptions.getSubscriptionResource({
      actor: actorOf(owner),
      subscriptionId,
      ownerAccountId: owner.accountId,
    });
    if (!resource.subscription) throw new Error('GetSubscriptionResource answered without a subscription');
    return {
      subscription: this.view(resource.subscription),
      matches: resource.matches.map((match) => ({
        matched_at: toIso(match.matchedAtMs),
        product: JSON.parse(match.productJson) as Record<string, unknown>,
      })),
      deliveries: resource.deliveries.map((delivery) => ({
        id: delivery.deliveryId,
        channel: delivery.channelType === 'email' ? 'email' : 'webhook',
        target: delivery.target,
        product_id: delivery.productId,
        status: delivery.status as 'pending' | 'delivered' | 'failed',
        attempts: delivery.attempts,
        last_error: delivery.lastError === '' ? null : delivery.lastError,
        created_at: toIso(delivery.createdAtMs),
        last_attempt_at: isoOrNull(delivery.lastAttemptAtMs),
        next_attempt_at: isoOrNull(delivery.nextAttemptAtMs),
        delivered_at: isoOrNull(delivery.deliveredAtMs),
      })),
    };
  }

  /**
   * MCP `resources/subscribe` on marketplace://subscriptions/{id} (docs/agents.md, "MCP resource subscriptions"):
   * the owner's only, like reading it (anyone else: 404), and only for a saved search with an `mcp_resource`
   * channel, the only kind whose resource gains matches.
   */
  async checkWatchable(caller: Principal | undefined, subscriptionId: string): Promise<void> {
    const owner = this.owner(caller);
    // Another account's saved search is not found, as when reading it.
    const { subscription } = await this.subscriptions.getSubscriptionResource({
      actor: actorOf(owner),
      subscriptionId,
      ownerAccountId: owner.accountId,
    });
    if (!subscription) throw new Error('GetSubscriptionResource answered without a subscription');
    if (!subscription.channels.some((channel) => channel.kind?.$case === 'mcpResource')) {
      throw validationError(`saved search ${subscriptionId} has no mcp_resource channel`, [
        {
          path: 'uri',
          message:
            'names a saved search without an mcp_resource channel: its resource never gains matches; ' +
            'subscribe_to_query with channels [{type: "mcp_resource"}] creates one that does',
        },
      ]);
    }
  }

  private owner(caller: Principal | undefined): Principal {
    if (!caller)
      throw unauthenticated('saved searches are read with the API key or agent token that created them');
    return caller;
  }
}
