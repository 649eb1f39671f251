import type { Database } from '@marketplace/database';
import type { EventLog, Subscription } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import type { Mailer } from '@marketplace/mailer';
import type { SellerContactsTable } from '@marketplace/seller-contacts';
import { decodeQuoteEvent } from '../adapters/quote-event.codec.js';
import { newQuoteRequestEmail, quoteResponseEmail } from '../domain/quote.emails.js';
import type { QuoteRequest } from '../domain/quote.events.js';
import type { ClaimTokens } from './claim-tokens.js';

export const QUOTE_TOPIC = 'marketplace.quote.v1';

/**
 * The quote emails, sent from the log, never on the request path: a new request to its seller, a response to
 * the buyer. Through `startProjection`, each event's email is sent inside the transaction that records the event
 * as applied, so:
 * - a redelivered event whose email went out and was recorded sends nothing;
 * - a failed send rolls back and the log delivers the event again (with a growing delay);
 * - a crash between send and commit sends it again: at least once, with the same Message-ID, so mail clients
 *   and the `.eml` store recognise the repeat (a seller who never hears of a request is the failure that matters).
 * A request whose seller contact has not been projected yet fails the same way and waits for it.
 */
export const startQuoteNotifications = (options: {
  readonly log: EventLog;
  readonly db: Database;
  readonly schema: string;
  readonly mailer: Mailer;
  readonly sellerContacts: SellerContactsTable;
  /** Right-hand side of the Message-IDs: the host of the public base URL. */
  readonly messageDomain: string;
  readonly claimTokens: ClaimTokens;
}): Promise<Subscription> => {
  const { mailer, sellerContacts, messageDomain, claimTokens } = options;
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
      switch (event.type) {
        case 'QuoteRequested': {
          const { sellerAccountId } = quoteRequest.product;
          const seller = await sellerContacts.find(tx, sellerAccountId);
          if (seller === undefined) {
            throw new Error(
              `no contact for seller ${sellerAccountId} yet: quote ${quoteRequest.quoteRequestId} waits`,
            );
          }
          const email = newQuoteRequestEmail({ quoteRequest, sellerName: seller.name, messageDomain });
          await mailer.send({ to: seller.email, ...email });
          return;
        }
        case 'QuoteResponded':
          await mailer.send({
            to: quoteRequest.buyer.email,
            ...quoteResponseEmail({ quoteRequest, messageDomain, claimToken: claimTokenOf(quoteRequest) }),
          });
          return;
        case 'QuoteClaimed':
          return;
      }
    },
  });
};
