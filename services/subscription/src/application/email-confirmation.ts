import { randomBytes } from 'node:crypto';
import type { Transaction } from '@marketplace/database';
import type { CommandContext } from '@marketplace/eventsourcing';
import { handleCommand } from '@marketplace/eventsourcing';
import type { Clock } from '@marketplace/platform';
import { escapeHtml, mailboxOf, validationError } from '@marketplace/platform';
import type { EventStore } from '@marketplace/eventsourcing';
import type { Database } from '@marketplace/database';
import type { EmailConfirmationCommand, EmailConfirmationEvent } from '../domain/email-confirmation.js';
import { emailConfirmationDecider, mailboxStreamIdOf } from '../domain/email-confirmation.js';
import type { Subscription } from '../domain/subscription.js';
import { emailConfirmationTokenOf, verifyEmailConfirmationToken } from '../domain/webhook-signature.js';
import type { ConfirmedMailboxes, OutgoingMail } from './ports.js';

/** Mailbox aggregates live in the subscription store: their events go out on `marketplace.subscription.v1`. */
const STREAM_TYPE = 'subscription';

export interface EmailConfirmationDependencies {
  readonly db: Database;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly mailboxes: ConfirmedMailboxes;
  readonly outgoingMail: OutgoingMail;
  /** The marketplace's key: it signs the confirmation links, under their own label. */
  readonly signingSecret: string;
  /** `{base_url}` of the confirmation link. */
  readonly publicBaseUrl: string;
}

const decide = (
  deps: EmailConfirmationDependencies,
  tx: Transaction,
  mailbox: string,
  command: Omit<EmailConfirmationCommand, 'metadata'>,
  context: CommandContext,
) =>
  handleCommand({
    store: deps.store,
    decider: emailConfirmationDecider,
    streamId: mailboxStreamIdOf(mailbox),
    streamType: STREAM_TYPE,
    tx,
    // Two saved searches naming one new mailbox may race: the loser decides again on the winner's request.
    retryOnConflict: 3,
    command: {
      ...command,
      metadata: {
        now: deps.clock.now(),
        actor: context.actor,
        correlationId: context.correlationId,
        traceparent: context.traceparent,
      },
    },
  });

/** The link of a confirmation email: its GET shows a page whose button POSTs (the gateway's). */
export const confirmationLinkOf = (publicBaseUrl: string, token: string): string =>
  `${publicBaseUrl}/api/email-confirmation?token=${encodeURIComponent(token)}`;

/**
 * In the transaction that records a new saved search: asks the owner of each of its unconfirmed mailboxes to
 * confirm, by one email queued in the outgoing-mail table (sent by its worker after the commit, never inside
 * the transaction). A mailbox already confirmed, or with a link still usable, gets nothing. Resolves to the
 * number of emails queued.
 */
export const requestEmailConfirmations = async (
  deps: EmailConfirmationDependencies,
  tx: Transaction,
  emails: readonly string[],
  context: CommandContext,
): Promise<number> => {
  let queued = 0;
  for (const email of emails) {
    const mailbox = mailboxOf(email);
    const requestId = randomBytes(12).toString('hex');
    const { events } = await decide(
      deps,
      tx,
      mailbox,
      { type: 'RequestEmailConfirmation', data: { mailbox, requestId } },
      context,
    );
    if (events.length === 0) continue;
    const link = confirmationLinkOf(
      deps.publicBaseUrl,
      emailConfirmationTokenOf(deps.signingSecret, mailbox, requestId),
    );
    queued += await deps.outgoingMail.enqueue(
      tx,
      [
        {
          to: email,
          subject: 'Confirm your email address for saved-search matches',
          text:
            'A saved search on the marketplace asked for new matching lots to be emailed to this address.\n' +
            `Nothing is sent until you confirm. To confirm, open this link and press the button:\n${link}\n\n` +
            'If you did not ask for this, ignore this email: nothing more will come.\n',
          html:
            '<p>A saved search on the marketplace asked for new matching lots to be emailed to this address. ' +
            'Nothing is sent until you confirm.</p>' +
            `<p><a href="${escapeHtml(link)}">Confirm this address</a></p>` +
            '<p>If you did not ask for this, ignore this email: nothing more will come.</p>',
          messageId: `<${requestId}@email-confirmation.marketplace>`,
        },
      ],
      deps.clock.now(),
    );
  }
  return queued;
};

/**
 * Confirms the mailbox of a confirmation link. A token this marketplace did not sign is a 400 on `token`; an
 * expired link too; a used one (the mailbox confirmed already) a 409. Resolves to the mailbox confirmed.
 */
export const confirmEmail = async (
  deps: EmailConfirmationDependencies,
  input: CommandContext & { readonly token: string },
): Promise<string> => {
  const verified = verifyEmailConfirmationToken(deps.signingSecret, input.token);
  if (verified === undefined) {
    throw validationError('invalid confirmation token', [
      { path: 'token', message: 'is not a confirmation link this marketplace sent' },
    ]);
  }
  const { mailbox, requestId } = verified;
  await deps.db.transaction(async (tx) => {
    const { events } = await decide(
      deps,
      tx,
      mailbox,
      { type: 'ConfirmEmailAddress', data: { mailbox, requestId } },
      input,
    );
    for (const { type, data } of events) {
      const event = { type, data } as EmailConfirmationEvent;
      if (event.type === 'EmailAddressConfirmed') {
        await deps.mailboxes.markConfirmed(tx, mailbox, event.data.confirmedAt);
      }
    }
  });
  return mailbox;
};

/** The mailboxes of these subscriptions' email channels that are not confirmed: answers show them pending. */
export const unconfirmedMailboxesOf = async (
  deps: Pick<EmailConfirmationDependencies, 'db' | 'mailboxes'>,
  subscriptions: readonly Subscription[],
): Promise<Set<string>> => {
  const mailboxes = subscriptions.flatMap((subscription) =>
    subscription.channels.flatMap((channel) => (channel.type === 'email' ? [mailboxOf(channel.email)] : [])),
  );
  const confirmed = await deps.mailboxes.confirmedAmong(deps.db, mailboxes);
  return new Set(mailboxes.filter((mailbox) => !confirmed.has(mailbox)));
};
