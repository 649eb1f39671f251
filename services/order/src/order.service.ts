import { migrate } from '@marketplace/database';
import {
  createPostgresEventStore,
  IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
  IdempotencyKeys,
  startOutboxRelay,
  startProjection,
} from '@marketplace/eventsourcing';
import type { Mailer } from '@marketplace/mailer';
import type { Database } from '@marketplace/database';
import type { Clock, Logger, ServiceHandle } from '@marketplace/platform';
import type { PeriodicJob, ServiceDependencies } from '@marketplace/runtime';
import { schedulePeriodicJob } from '@marketplace/runtime';
import { OutgoingMailTable, startOutgoingMailWorker } from '@marketplace/outgoing-mail';
import { serveGrpcService } from '@marketplace/rpc';
import { CompletionsTable } from './adapters/completions.table.js';
import { QuoteRedemptionsTable } from './adapters/quote-redemptions.table.js';
import { DisputeNotificationsTable } from './adapters/dispute-notifications.table.js';
import { createGrpcListings } from './adapters/listings.grpc-client.js';
import { encodeOrderEvent, ORDER_TOPIC } from './adapters/order-event.codec.js';
import { orderMigrations } from './adapters/order.migrations.js';
import { OrdersTable } from './adapters/orders.table.js';
import { StockReleasesTable } from './adapters/stock-releases.table.js';
import { SellerContactsTable, startSellerContactsProjection } from '@marketplace/seller-contacts';
import { queueSellerNotice, releaseCancelledStock } from './application/order-lifecycle.js';
import type { SellerNotice } from './application/order-lifecycle.js';
import { orderV1 } from '@marketplace/proto';
import { createGrpcQuotes } from './adapters/quotes.grpc-client.js';
import { recoverInterruptedCompletions } from './application/checkout.js';
import type { OrderDependencies } from './application/order.dependencies.js';
import { completeInspectedOrders, queueDisputeMails } from './application/orders.js';
import type { Listings, Quotes } from './application/ports.js';
import type { OrderSettings } from './order.config.js';
import { orderGrpcService } from './transport/order.grpc.js';

const SERVICE_NAME = 'order';
/** The consumer of the service's own topic that emails sellers of new and disputed orders. */
export const SELLER_NOTICES_GROUP = 'order-seller-notices';

/** OrderPlaced and IssueReported concern the seller; every other event of the topic is none. */
const sellerNoticeOf = (bytes: Uint8Array): SellerNotice | undefined => {
  const event = orderV1.OrderEvent.decode(bytes);
  if (event.payload?.$case === 'orderPlaced' && event.payload.value.order) {
    return { kind: 'placed', orderId: event.payload.value.order.orderId };
  }
  if (event.payload?.$case === 'issueReported') {
    return { kind: 'disputed', orderId: Number(event.streamId.replace(/^order_/, '')) };
  }
  return undefined;
};
/** A completion attempt still unfinished after this long was interrupted; the recovery job finishes it. */
export const INTERRUPTED_AFTER_MS = 60_000;

export interface OrderServiceOptions extends ServiceDependencies {
  /** The PostgreSQL schema the service owns; default `order` (tests use a fresh one). */
  readonly schema?: string;
  /** Where the listing and quote services listen (`host:port`), unless `ports` replaces them. */
  readonly services?: { readonly listing: string; readonly quote: string };
  /** Test doubles of the listing and quote services. */
  readonly ports?: { readonly listings: Listings; readonly quotes: Quotes };
  readonly settings: OrderSettings;
  /** Sends the operator's dispute notifications. */
  readonly mailer: Mailer;
}

/** The application's dependencies on a migrated schema: the store, the tables and the ports. */
export const orderDependencies = (options: {
  readonly db: Database;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly schema: string;
  readonly ports: { readonly listings: Listings; readonly quotes: Quotes };
  readonly settings: OrderSettings;
  readonly onDisputeRecorded: () => void;
  readonly onMailQueued?: (() => void) | undefined;
  readonly onStockReleaseQueued?: (() => void) | undefined;
}): OrderDependencies => ({
  db: options.db,
  clock: options.clock,
  logger: options.logger,
  store: createPostgresEventStore({ db: options.db, schema: options.schema }),
  orders: new OrdersTable(options.schema),
  completions: new CompletionsTable(options.schema),
  quoteRedemptions: new QuoteRedemptionsTable(options.schema),
  disputes: new DisputeNotificationsTable(options.schema),
  outgoingMail: new OutgoingMailTable(options.schema),
  disputeMailTo: options.settings.ADMIN_EMAIL,
  listings: options.ports.listings,
  quotes: options.ports.quotes,
  bulkThreshold: {
    moreThanUnits: options.settings.CHECKOUT_BULK_MAX_UNITS,
    moreThanSubtotalCents: options.settings.CHECKOUT_BULK_MAX_SUBTOTAL_CENTS,
  },
  checkoutTtlMs: options.settings.CHECKOUT_SESSION_TTL_MS,
  onDisputeRecorded: options.onDisputeRecorded,
  onMailQueued: options.onMailQueued ?? (() => undefined),
  stockReleases: new StockReleasesTable(options.schema),
  onStockReleaseQueued: options.onStockReleaseQueued ?? (() => undefined),
  sellerContacts: new SellerContactsTable(options.schema),
  idempotencyKeys: new IdempotencyKeys(options.db, options.schema, options.clock),
});

/**
 * Starts the order service: brings its schema up to date, starts the outbox relay (topic marketplace.order.v1
 * for orders and checkout sessions alike), the sellers' contacts projection and the consumer of its own topic that emails sellers of new and disputed
 * orders, the
 * automatic completion, the stock release of cancelled orders, the completion recovery and the idempotency key
 * purge jobs, and the outgoing-mail worker (the operator's dispute emails), then serves gRPC. `stop()` drains the server first, so the relay publishes what it appended.
 */
export const startOrderService = async (options: OrderServiceOptions): Promise<ServiceHandle> => {
  const { db, log, clock, settings } = options;
  const logger = options.logger.child({ service: SERVICE_NAME });
  const schema = options.schema ?? SERVICE_NAME;
  await migrate(db, schema, orderMigrations);

  const clients = options.ports
    ? undefined
    : {
        listings: createGrpcListings(options.services?.listing ?? '127.0.0.1:0'),
        quotes: createGrpcQuotes(options.services?.quote ?? '127.0.0.1:0'),
      };
  const ports = options.ports ?? clients;
  if (!ports) throw new Error('the order service needs the listing and quote services');
  const mailWorker = startOutgoingMailWorker({
    db,
    table: new OutgoingMailTable(schema),
    mailer: options.mailer,
    clock,
    logger,
  });
  // Set once the job is scheduled below; a cancellation before that waits for the job's first pass.
  let stockReleaseJob: PeriodicJob | undefined;
  const deps = orderDependencies({
    db,
    clock,
    logger,
    schema,
    ports,
    settings,
    onDisputeRecorded: () => mailWorker.wake(),
    onMailQueued: () => mailWorker.wake(),
    onStockReleaseQueued: () => stockReleaseJob?.poke(),
  });
  if (settings.ADMIN_EMAIL === undefined) {
    logger.warn('ADMIN_EMAIL is not set: dispute notifications wait until it is');
  } else {
    // Notices recorded while ADMIN_EMAIL was unset.
    const queueBacklog = async (): Promise<void> => {
      while ((await db.transaction((tx) => queueDisputeMails(deps, tx))) > 0) mailWorker.wake();
    };
    await queueBacklog().catch(async (error: unknown) => {
      await mailWorker.stop();
      clients?.listings.close();
      clients?.quotes.close();
      throw error;
    });
  }
  const sellerContacts = await startSellerContactsProjection({
    log,
    db,
    schema,
    group: 'order-seller-contacts',
    table: deps.sellerContacts,
  }).catch(async (error: unknown) => {
    await mailWorker.stop();
    clients?.listings.close();
    clients?.quotes.close();
    throw error;
  });
  const sellerNotices = await startProjection({
    log,
    db,
    schema,
    topic: ORDER_TOPIC,
    group: SELLER_NOTICES_GROUP,
    decode: (message) => sellerNoticeOf(message.value),
    apply: async (tx, notice) => {
      if (notice !== undefined) await queueSellerNotice(deps, tx, notice);
    },
  }).catch(async (error: unknown) => {
    await sellerContacts.close();
    await mailWorker.stop();
    clients?.listings.close();
    clients?.quotes.close();
    throw error;
  });
  const jobs: PeriodicJob[] = [
    schedulePeriodicJob('order-completion', () => completeInspectedOrders(deps), {
      intervalMs: settings.ORDER_COMPLETION_INTERVAL_MS,
      logger,
    }),
    schedulePeriodicJob(
      'checkout-recovery',
      () => recoverInterruptedCompletions(deps, INTERRUPTED_AFTER_MS),
      {
        intervalMs: INTERRUPTED_AFTER_MS / 2,
        logger,
      },
    ),
    (stockReleaseJob = schedulePeriodicJob('stock-release', () => releaseCancelledStock(deps), {
      intervalMs: settings.ORDER_COMPLETION_INTERVAL_MS,
      logger,
    })),
    schedulePeriodicJob('idempotency-key-purge', () => deps.idempotencyKeys.purgeExpired(), {
      intervalMs: IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
      logger,
    }),
  ];
  const relay = startOutboxRelay({
    db,
    schema,
    log,
    name: SERVICE_NAME,
    encode: encodeOrderEvent,
    topicFor: () => ORDER_TOPIC,
    batchIntervalMs: options.relayBatchIntervalMs,
    logger,
  });
  const stopBackgroundWork = async (): Promise<void> => {
    await Promise.all(jobs.map((job) => job.stop()));
    await relay.stop();
    await sellerNotices.close();
    await sellerContacts.close();
    await mailWorker.stop();
    clients?.listings.close();
    clients?.quotes.close();
  };
  return serveGrpcService({
    host: options.grpc.host,
    port: options.grpc.port,
    services: [orderGrpcService(deps)],
    logger,
    serviceName: SERVICE_NAME,
    afterServerStopped: stopBackgroundWork,
  }).catch(async (error: unknown) => {
    await stopBackgroundWork();
    throw error;
  });
};
