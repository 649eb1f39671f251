import type { Database, Transaction } from '@marketplace/database';
import type { EventLog, LogConsumer } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import type { OutgoingMailTable, QueuedMail } from '@marketplace/outgoing-mail';
import type { Clock } from '@marketplace/platform';
import type { SellerContactsTable } from '@marketplace/seller-contacts';
import { decodeQuoteEvent } from './quote-event.codec.js';
import { buyerAnswerEmail, newQuoteRequestEmail, quoteResponseEmail } from '../domain/quote.emails.js';
import type { QuoteRequest } from '../domain/quote.events.js';
import type { ClaimTokens } from '../application/claim-tokens.js';

export const QUOTE_TOPIC = 'marketplace.quote.v1';

/**
 * The quote emails, from the log, never on the request path: a new request to its seller, a response to the
 * buyer. Through `startProjection`, each event's email is queued in the outgoing-mail table inside the
 * transaction that records the event as applied (a buyer's answer to a counter-offer goes to the seller); the outgoing-mail worker sends it after the commit, so no
 * transaction waits on the mail server (`docs/architecture.md`, "Outgoing mail"). The email's Message-ID is
 * stable per request and step, the queue's key: a redelivered event queues nothing new.
 * A request whose seller contact has not been projected yet fails and waits for it (the log delivers it again).
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
  const queue = async (tx: Transaction, mail: QueuedMail): Promise<void> => {
    await outgoingMail.enqueue(tx, [mail], clock.now());
    db.afterCommit(options.wakeMailWorker);
  };
  // Only an unclaimed anonymous request needs its token; an account's request is checked out by the account.
  const claimTokenOf = (quoteRequest: QuoteRequest): string | undefined =>
    quoteRequest.buyerAccountId === undefined ? claimTokens.tokenOf(quoteRequest.quoteRequestId) : undefined;
  return startProjection({
    log: options.log,
    db: options.db,
    schema: options.schema,
    topic: QUOTE_TOPIC,
    group: 'quote-notifications',
    decode: (message) => decodeQuoteEvent(message.value),
    apply: async (tx, { event }) => {
      const { quoteRequest } = event.data;
      const sellerOf = async () => {
        const { sellerAccountId } = quoteRequest.product;
        const seller = await sellerContacts.find(tx, sellerAccountId);
        if (seller === undefined) {
          throw new Error(
            `no contact for seller ${sellerAccountId} yet: quote ${quoteRequest.quoteRequestId} waits`,
          );
        }
        return seller;
      };
      switch (event.type) {
        case 'QuoteRequested': {
          const seller = await sellerOf();
          const email = newQuoteRequestEmail({ quoteRequest, sellerName: seller.name, messageDomain });
          await queue(tx, { to: seller.email, ...email });
          return;
        }
        case 'QuoteResponded': {
          const email = quoteResponseEmail({
            quoteRequest,
            messageDomain,
            claimToken: claimTokenOf(quoteRequest),
          });
          await queue(tx, { to: quoteRequest.buyer.email, ...email });
          return;
        }
        case 'QuoteBuyerResponded': {
          const seller = await sellerOf();
          const email = buyerAnswerEmail({ quoteRequest, sellerName: seller.name, messageDomain });
          await queue(tx, { to: seller.email, ...email });
          return;
        }
        case 'QuoteClaimed':
          return;
      }
    },
  });
};
