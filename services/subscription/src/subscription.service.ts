import { ephemeralSigningKey, publicBaseUrlOf } from '@marketplace/platform';
import { migrate } from '@marketplace/database';
import type { LogConsumer } from '@marketplace/eventlog';
import { createPostgresEventStore, startOutboxRelay, startProjection } from '@marketplace/eventsourcing';
import type { BatchEvent } from '@marketplace/eventsourcing';
import type { Mailer } from '@marketplace/mailer';
import { createAddressPolicy, createGuardedFetcher } from '@marketplace/outbound-http';
import type { ServiceHandle, SigningKey } from '@marketplace/platform';
import type { ServiceDependencies } from '@marketplace/runtime';
import { serveGrpcService } from '@marketplace/rpc';
import { OutgoingMailTable, startOutgoingMailWorker } from '@marketplace/outgoing-mail';
import { ConfirmedMailboxesTable } from './adapters/confirmed-mailboxes.table.js';
import { DeliveriesTable } from './adapters/deliveries.table.js';
import { confirmEmail, unconfirmedMailboxesOf } from './application/email-confirmation.js';
import { createDeliverySender } from './adapters/delivery.senders.js';
import {
  ACCOUNT_TOPIC,
  decodeNewListing,
  decodeSellerCountry,
  LISTING_TOPIC,
} from './adapters/marketplace-event.decoders.js';
import { MatchingTables } from './adapters/matching.tables.js';
import { encodeSubscriptionEvent } from './adapters/subscription-event.codec.js';
import { subscriptionMigrations } from './adapters/subscription.migrations.js';
import { SubscriptionsTable } from './adapters/subscriptions.table.js';
import { startDeliveryWorker } from './application/delivery-worker.js';
import { matchNewListings } from './application/match-listing.js';
import type { SubscriptionDependencies } from './application/subscriptions.js';
import {
  listSubscriptions,
  rotateWebhookSecret,
  subscribe,
  subscriptionResource,
  unsubscribe,
} from './application/subscriptions.js';
import { ATTEMPT_TIMEOUT_MS } from './domain/delivery-policy.js';
import { subscriptionGrpcService } from './transport/subscription.grpc.js';
import { SellerWebhooksTable } from './adapters/seller-webhooks.table.js';
import {
  decodeSellerOrderEvent,
  decodeSellerQuoteEvent,
  ORDER_TOPIC,
  QUOTE_TOPIC,
} from './adapters/seller-event.decoders.js';
import {
  deleteSellerWebhook,
  listSellerWebhooks,
  queueSellerEvents,
  registerSellerWebhook,
} from './application/seller-webhooks.js';
import type { SellerWebhookDependencies } from './application/seller-webhooks.js';
import type { SellerEvent } from './application/ports.js';

const SERVICE_NAME = 'subscription';
/** Consumer groups: one matcher and one seller projection per deployment, shared by the replicas. */
export const MATCHER_GROUP = 'subscription-matcher';
export const SELLER_COUNTRY_GROUP = 'subscription-seller-countries';
/** Sellers' webhooks of order and quote events (docs/specification.md, "Seller notifications"). */
export const SELLER_ORDER_EVENTS_GROUP = 'subscription-seller-order-events';
export const SELLER_QUOTE_EVENTS_GROUP = 'subscription-seller-quote-events';

export interface SubscriptionServiceOptions extends ServiceDependencies {
  /** The PostgreSQL schema the service owns; default `subscription` (tests use a fresh one). */
  readonly schema?: string;
  /** Sends match emails. */
  readonly mailer: Mailer;
  /** Signs webhooks (`WEBHOOK_SIGNING_SECRET`, or the one generated in DATA_DIR). */
  readonly signingSecret: string;
  /**
   * The marketplace signing key (`SIGNING_KEY_PEM`, the same key the gateway's /.well-known/ucp publishes):
   * webhooks also carry its RFC 9421 signature (docs/agents.md, "Signing key"). Absent: one for this process.
   */
  readonly signingKey?: SigningKey | undefined;
  /** Hosts and CIDRs webhooks may reach although not public (`OUTBOUND_ALLOW_HOSTS`). */
  readonly outboundAllowList?: { readonly hosts?: readonly string[]; readonly cidrs?: readonly string[] };
  /** `{base_url}` of product and unsubscribe links; default `http://localhost:8080`. */
  readonly publicBaseUrl?: string | undefined;
  /** Delivery worker tuning (tests shorten the lease). */
  readonly delivery?: { readonly concurrency?: number; readonly leaseMs?: number; readonly pollMs?: number };
}

/**
 * Starts the subscription service: migrates its schema, starts the outbox relay, the seller-country projection,
 * the listing matcher and the delivery worker, then serves gRPC. `stop()` drains in reverse order.
 */
export const startSubscriptionService = async (
  options: SubscriptionServiceOptions,
): Promise<ServiceHandle> => {
  const { db, log, clock } = options;
  const logger = options.logger.child({ service: SERVICE_NAME });
  const schema = options.schema ?? SERVICE_NAME;
  const publicBaseUrl = publicBaseUrlOf(options.publicBaseUrl);

  await migrate(db, schema, subscriptionMigrations);
  const outgoingMail = new OutgoingMailTable(schema);
  // Confirmation emails (double opt-in) go through the outgoing-mail queue: sent after the commit.
  const mailWorker = startOutgoingMailWorker({
    db,
    table: outgoingMail,
    mailer: options.mailer,
    clock,
    logger,
  });
  const deps: SubscriptionDependencies = {
    db,
    clock,
    store: createPostgresEventStore({ db, schema }),
    subscriptions: new SubscriptionsTable(schema),
    matching: new MatchingTables(schema),
    deliveries: new DeliveriesTable(schema),
    signingSecret: options.signingSecret,
    webhookAddresses: createAddressPolicy(options.outboundAllowList),
    mailboxes: new ConfirmedMailboxesTable(schema),
    outgoingMail,
    publicBaseUrl,
    wakeMailWorker: () => mailWorker.wake(),
  };
  const fetcher = createGuardedFetcher({
    allowList: options.outboundAllowList,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
  });
  const worker = startDeliveryWorker({
    db,
    deliveries: deps.deliveries,
    clock,
    logger,
    send: createDeliverySender({
      fetcher,
      mailer: options.mailer,
      signingSecret: options.signingSecret,
      signingKey: options.signingKey ?? ephemeralSigningKey(),
      webhookSecretOf: (subscriptionId) => deps.subscriptions.webhookSecretOf(db, subscriptionId),
      clock,
      publicBaseUrl,
    }),
    ...options.delivery,
  });
  const sellerWebhooks: SellerWebhookDependencies = {
    db,
    clock,
    webhooks: new SellerWebhooksTable(schema),
    deliveries: deps.deliveries,
    signingSecret: options.signingSecret,
    webhookAddresses: deps.webhookAddresses,
  };
  /** A batch's seller events (undefined: an event no seller is told of) queued together. */
  const queueForSellers = async (
    tx: Parameters<typeof queueSellerEvents>[1],
    batch: readonly BatchEvent<SellerEvent | undefined>[],
  ) => {
    const events = batch.flatMap(({ event }) => (event === undefined ? [] : [event]));
    // After the commit: the worker claims only committed rows.
    if ((await queueSellerEvents(sellerWebhooks, tx, events)) > 0) setImmediate(() => worker.wake());
  };
  const consumers: LogConsumer[] = [];
  const relay = startOutboxRelay({
    db,
    schema,
    log,
    name: SERVICE_NAME,
    encode: encodeSubscriptionEvent,
    batchIntervalMs: options.relayBatchIntervalMs,
    logger,
  });
  const stopBackgroundWork = async (): Promise<void> => {
    await relay.stop();
    await Promise.all(consumers.map((consumer) => consumer.close()));
    await worker.stop();
    await mailWorker.stop();
    await fetcher.close();
  };
  try {
    consumers.push(
      await startProjection({
        log,
        db,
        schema,
        topic: ACCOUNT_TOPIC,
        group: SELLER_COUNTRY_GROUP,
        decode: (message) => decodeSellerCountry(message.value),
        apply: async (tx, seller) => {
          if (seller !== undefined) await deps.matching.saveSeller(tx, seller);
        },
      }),
    );
    consumers.push(
      await startProjection({
        log,
        db,
        schema,
        topic: LISTING_TOPIC,
        group: MATCHER_GROUP,
        decode: (message) => decodeNewListing(message.value),
        applyBatch: async (tx, events) => {
          const listings = events.flatMap(({ event }) => (event === undefined ? [] : [event]));
          const enqueued = await matchNewListings({ ...deps, publicBaseUrl }, tx, listings, clock.now());
          // After the commit: the worker claims only committed rows.
          if (enqueued > 0) setImmediate(() => worker.wake());
        },
      }),
    );
    consumers.push(
      await startProjection({
        log,
        db,
        schema,
        topic: ORDER_TOPIC,
        group: SELLER_ORDER_EVENTS_GROUP,
        decode: (message) => decodeSellerOrderEvent(message.value),
        applyBatch: queueForSellers,
      }),
    );
    consumers.push(
      await startProjection({
        log,
        db,
        schema,
        topic: QUOTE_TOPIC,
        group: SELLER_QUOTE_EVENTS_GROUP,
        decode: (message) => decodeSellerQuoteEvent(message.value),
        applyBatch: queueForSellers,
      }),
    );
    return await serveGrpcService({
      host: options.grpc.host,
      port: options.grpc.port,
      services: [
        subscriptionGrpcService({
          subscribe: (input) => subscribe(deps, input),
          unsubscribe: (input) => unsubscribe(deps, input),
          listSubscriptions: (ownerAccountId) => listSubscriptions(deps, ownerAccountId),
          rotateWebhookSecret: (input) => rotateWebhookSecret(deps, input),
          subscriptionResource: (subscriptionId, ownerAccountId) =>
            subscriptionResource(deps, subscriptionId, ownerAccountId),
          registerSellerWebhook: (input) => registerSellerWebhook(sellerWebhooks, input),
          listSellerWebhooks: (sellerAccountId) => listSellerWebhooks(sellerWebhooks, sellerAccountId),
          deleteSellerWebhook: (input) => deleteSellerWebhook(sellerWebhooks, input),
          confirmEmail: (input) => confirmEmail(deps, input),
          unconfirmedMailboxes: (subscriptions) => unconfirmedMailboxesOf(deps, subscriptions),
        }),
      ],
      logger,
      serviceName: SERVICE_NAME,
      afterServerStopped: stopBackgroundWork,
    });
  } catch (error) {
    await stopBackgroundWork();
    throw error;
  }
};
