import type { Database } from '@marketplace/database';
import type { EventLog, LogConsumer } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import type { OutgoingMailTable, QueuedMail } from '@marketplace/outgoing-mail';
import type { Clock } from '@marketplace/platform';
import type { SellerContact, SellerContactsTable } from '@marketplace/seller-contacts';
import { decodeQuoteEvent } from './quote-event.codec.js';
import { buyerAnswerEmail, newQuoteRequestEmail, quoteResponseEmail } from '../domain/quote.emails.js';
import type { QuoteEvent, QuoteRequest } from '../domain/quote.events.js';
import type { ClaimTokens } from '../application/claim-tokens.js';

export const QUOTE_TOPIC = 'marketplace.quote.v1';

/**
 * The quote emails, from the log, never on the request path: a new request to its seller, a response to the
 * buyer, a buyer's answer to a counter-offer to the seller. Through `startProjection`, a batch's emails are
 * queued in the outgoing-mail table inside the transaction that records its events as applied, in one statement,
 * after one lookup of the batch's sellers; the outgoing-mail worker sends them after the commit, so no
 * transaction waits on the mail server (`docs/architecture.md`, "Outgoing mail"). The email's Message-ID is
 * stable per request and step, the queue's key: a redelivered event queues nothing new.
 * A request whose seller contact has not been projected yet fails its batch, which waits for it (the log
 * delivers it again).
 */
export const startQuoteNotifications = (options: {
  readonly log: EventLog;
  readonly db: Database;
  /** Called once a transaction that queued mail committed: the worker claims only committed rows. */
  readonly wakeMailWorker: () => void;
  readonly schema: string;
  readonly outgoingMail: OutgoingMailTable;
  readonly clock: Clock;
  readonly sellerContacts: SellerContactsTable;
  /** Right-hand side of the Message-IDs: the host of the public base URL. */
  readonly messageDomain: string;
  readonly claimTokens: ClaimTokens;
}): Promise<LogConsumer> => {
  const { db, outgoingMail, clock, sellerContacts, messageDomain, claimTokens } = options;
  // Only an unclaimed anonymous request needs its token; an account's request is checked out by the account.
  const claimTokenOf = (quoteRequest: QuoteRequest): string | undefined =>
    quoteRequest.buyerAccountId === undefined ? claimTokens.tokenOf(quoteRequest.quoteRequestId) : undefined;
  /** The email an event sends, if any; `sellerOf` answers the contact of a seller the event writes to. */
  const mailOf = (
    event: QuoteEvent,
    sellerOf: (quoteRequest: QuoteRequest) => SellerContact,
  ): QueuedMail[] => {
    const { quoteRequest } = event.data;
    switch (event.type) {
      case 'QuoteRequested': {
        const seller = sellerOf(quoteRequest);
        return [
          {
            to: seller.email,
            ...newQuoteRequestEmail({ quoteRequest, sellerName: seller.name, messageDomain }),
          },
        ];
      }
      case 'QuoteResponded':
        return [
          {
            to: quoteRequest.buyer.email,
            ...quoteResponseEmail({ quoteRequest, messageDomain, claimToken: claimTokenOf(quoteRequest) }),
          },
        ];
      case 'QuoteBuyerResponded': {
        const seller = sellerOf(quoteRequest);
        return [
          { to: seller.email, ...buyerAnswerEmail({ quoteRequest, sellerName: seller.name, messageDomain }) },
        ];
      }
      case 'QuoteClaimed':
        return [];
    }
  };
  return startProjection({
    log: options.log,
    db: options.db,
    schema: options.schema,
    topic: QUOTE_TOPIC,
    group: 'quote-notifications',
    decode: (message) => decodeQuoteEvent(message.value),
    applyBatch: async (tx, batch) => {
      const events = batch.map(({ event }) => event.event);
      const sellerIds = new Set(
        events
          .filter((event) => SELLER_BOUND.has(event.type))
          .map((event) => event.data.quoteRequest.product.sellerAccountId),
      );
      const sellers = await sellerContacts.findMany(tx, [...sellerIds]);
      const sellerOf = ({ product, quoteRequestId }: QuoteRequest): SellerContact => {
        const seller = sellers.get(product.sellerAccountId);
        if (seller === undefined) {
          throw new Error(
            `no contact for seller ${product.sellerAccountId} yet: quote ${quoteRequestId} waits`,
          );
        }
        return seller;
      };
      const mails = events.flatMap((event) => mailOf(event, sellerOf));
      if (mails.length === 0) return;
      await outgoingMail.enqueue(tx, mails, clock.now());
      db.afterCommit(options.wakeMailWorker);
    },
  });
};

/** The events whose email goes to the seller. */
const SELLER_BOUND: ReadonlySet<QuoteEvent['type']> = new Set(['QuoteRequested', 'QuoteBuyerResponded']);
