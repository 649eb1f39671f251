import { publicBaseUrlOf } from '@marketplace/platform';
import { migrate } from '@marketplace/database';
import type { LogConsumer } from '@marketplace/eventlog';
import {
  createPostgresEventStore,
  IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
  IdempotencyKeys,
  startOutboxRelay,
} from '@marketplace/eventsourcing';
import type { Mailer } from '@marketplace/mailer';
import type { ServiceHandle } from '@marketplace/platform';
import type { ServiceDependencies } from '@marketplace/runtime';
import { schedulePeriodicJob } from '@marketplace/runtime';
import { OutgoingMailTable, startOutgoingMailWorker } from '@marketplace/outgoing-mail';
import { serveGrpcService } from '@marketplace/rpc';
import { SellerContactsTable, startSellerContactsProjection } from '@marketplace/seller-contacts';
import { startListingSnapshotsProjection } from './adapters/listing-snapshots.projection.js';
import { ListingSnapshotsTable } from './adapters/listing-snapshots.table.js';
import { loadClaimKey } from './adapters/claim-key.table.js';
import { encodeQuoteEvent } from './adapters/quote-event.codec.js';
import { quoteRequestIdSequence } from './adapters/quote-id.sequence.js';
import { QuoteRequestsTable } from './adapters/quote-requests.table.js';
import { quoteMigrations } from './adapters/quote.migrations.js';
import { claimQuote } from './application/claim-quote.js';
import { ClaimTokens } from './application/claim-tokens.js';
import type { QuoteDependencies } from './application/quote.dependencies.js';
import { startQuoteNotifications } from './adapters/quote-notifications.js';
import {
  countQuoteRequestsSince,
  getBuyerQuoteRequest,
  getQuoteRequest,
  listBuyerQuoteRequests,
  listQuoteRequests,
} from './application/quote.queries.js';
import { requestQuote } from './application/request-quote.js';
import { respondToQuote } from './application/respond-to-quote.js';
import { respondToCounterOffer } from './application/respond-to-counter-offer.js';
import { quoteGrpcService } from './transport/quote.grpc.js';

const SERVICE_NAME = 'quote';

export interface QuoteServiceOptions extends ServiceDependencies {
  /** The PostgreSQL schema the service owns; default `quote` (tests use a fresh one). */
  readonly schema?: string;
  /** Sends the seller's and the buyer's quote emails (queued from the log, sent after commit). */
  readonly mailer: Mailer;
  /** `{base_url}` whose host names the emails' Message-IDs; default `http://localhost:8080`. */
  readonly publicBaseUrl?: string | undefined;
}

/**
 * Starts the quote service: brings its schema up to date, starts the projections it reads (listings, seller
 * contacts), the outbox relay, the notification consumer with its outgoing-mail worker and the purge of expired
 * idempotency keys, then serves gRPC. `stop()` drains in reverse order: in-flight calls finish, the relay
 * publishes what they appended, then the consumers stop, then the mail worker finishes the sends in hand.
 */
export const startQuoteService = async (options: QuoteServiceOptions): Promise<ServiceHandle> => {
  const { db, log, clock } = options;
  const logger = options.logger.child({ service: SERVICE_NAME });
  const schema = options.schema ?? SERVICE_NAME;

  await migrate(db, schema, quoteMigrations);
  const listings = new ListingSnapshotsTable(schema);
  const deps: QuoteDependencies = {
    db,
    clock,
    store: createPostgresEventStore({ db, schema }),
    allocateQuoteRequestId: quoteRequestIdSequence(schema),
    quoteRequests: new QuoteRequestsTable(schema),
    listings,
    idempotencyKeys: new IdempotencyKeys(db, schema, clock),
    claimTokens: new ClaimTokens(await loadClaimKey(db, schema)),
  };
  const sellerContacts = new SellerContactsTable(schema);
  const outgoingMail = new OutgoingMailTable(schema);
  const mailWorker = startOutgoingMailWorker({
    db,
    table: outgoingMail,
    mailer: options.mailer,
    clock,
    logger,
  });
  const consumers: LogConsumer[] = [];
  const relay = startOutboxRelay({
    db,
    schema,
    log,
    name: SERVICE_NAME,
    encode: encodeQuoteEvent,
    batchIntervalMs: options.relayBatchIntervalMs,
    logger,
  });
  const keyPurge = schedulePeriodicJob('idempotency-key-purge', () => deps.idempotencyKeys.purgeExpired(), {
    intervalMs: IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
    logger,
  });
  const stopBackgroundWork = async (): Promise<void> => {
    await relay.stop();
    await keyPurge.stop();
    await Promise.all(consumers.map((consumer) => consumer.close()));
    await mailWorker.stop();
  };
  try {
    consumers.push(await startListingSnapshotsProjection({ log, db, schema, table: listings }));
    consumers.push(
      await startSellerContactsProjection({
        log,
        db,
        schema,
        group: 'quote-seller-contacts',
        table: sellerContacts,
      }),
    );
    consumers.push(
      await startQuoteNotifications({
        log,
        db,
        wakeMailWorker: () => mailWorker.wake(),
        schema,
        outgoingMail,
        clock,
        sellerContacts,
        claimTokens: deps.claimTokens,
        messageDomain: new URL(publicBaseUrlOf(options.publicBaseUrl)).hostname,
      }),
    );
    // The server drains first so the relay publishes whatever in-flight calls appended.
    return await serveGrpcService({
      host: options.grpc.host,
      port: options.grpc.port,
      services: [
        quoteGrpcService({
          requestQuote: (input) => requestQuote(deps, input),
          claimQuote: (input) => claimQuote(deps, input),
          listQuoteRequests: (input) => listQuoteRequests(deps, input),
          respondToQuote: (input) => respondToQuote(deps, input),
          respondToCounterOffer: (input) => respondToCounterOffer(deps, input),
          getQuoteRequest: (quoteRequestId) => getQuoteRequest(deps, quoteRequestId),
          getBuyerQuoteRequest: (input) => getBuyerQuoteRequest(deps, input),
          listBuyerQuoteRequests: (input) => listBuyerQuoteRequests(deps, input),
          countQuoteRequestsSince: (since) => countQuoteRequestsSince(deps, since),
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
