import { createHash } from 'node:crypto';
import type { Command, Decider, DomainEvent } from '@marketplace/eventsourcing';
import { conflict, validationError } from '@marketplace/platform';

/**
 * Double opt-in of email channels (docs/security.md, API6): matches are emailed to an address only once its
 * owner confirmed it with the signed single-use link of a confirmation email. One aggregate per mailbox (the
 * address normalised by `mailboxOf`, as the rate limits and channel deduplication normalise it), so a
 * confirmation holds for every saved search, present and later, that names the mailbox.
 */

/** How long a confirmation link may be used. */
export const EMAIL_CONFIRMATION_TTL_MS = 7 * 24 * 60 * 60 * 1_000;

/** `mbx_<24 hex>`: the aggregate id, a hash so that the stream id (a log message key) shows no address. */
export const mailboxStreamIdOf = (mailbox: string): string =>
  `mbx_${createHash('sha256').update(mailbox).digest('hex').slice(0, 24)}`;

export type EmailConfirmationRequested = DomainEvent<
  'EmailConfirmationRequested',
  {
    readonly mailbox: string;
    readonly requestId: string;
    readonly requestedAt: number;
    readonly expiresAt: number;
  }
>;
export type EmailAddressConfirmed = DomainEvent<
  'EmailAddressConfirmed',
  { readonly mailbox: string; readonly requestId: string; readonly confirmedAt: number }
>;
export type EmailConfirmationEvent = EmailConfirmationRequested | EmailAddressConfirmed;

/** A saved search names the mailbox: ask its owner, unless confirmed or a link is still out. */
export type RequestEmailConfirmation = Command<
  'RequestEmailConfirmation',
  { readonly mailbox: string; readonly requestId: string }
>;
/** The link of `requestId` was used (its signature already checked by the application, which holds the key). */
export type ConfirmEmailAddress = Command<
  'ConfirmEmailAddress',
  { readonly mailbox: string; readonly requestId: string }
>;
export type EmailConfirmationCommand = RequestEmailConfirmation | ConfirmEmailAddress;

export type EmailConfirmationState =
  | { readonly status: 'unknown' }
  /** Links sent and not used, by request id: when each expires. */
  | { readonly status: 'pending'; readonly requests: Readonly<Record<string, number>> }
  | { readonly status: 'confirmed'; readonly confirmedAt: number };

const requestConfirmation = (
  command: RequestEmailConfirmation,
  state: EmailConfirmationState,
): EmailConfirmationRequested[] => {
  const { now } = command.metadata;
  if (state.status === 'confirmed') return [];
  // One email while a link is still usable: more saved searches naming the mailbox do not flood it.
  if (state.status === 'pending' && Object.values(state.requests).some((expiresAt) => now < expiresAt)) {
    return [];
  }
  const { mailbox, requestId } = command.data;
  return [
    {
      type: 'EmailConfirmationRequested',
      data: { mailbox, requestId, requestedAt: now, expiresAt: now + EMAIL_CONFIRMATION_TTL_MS },
    },
  ];
};

const invalidToken = (message: string) =>
  validationError(`invalid confirmation token: ${message}`, [{ path: 'token', message }]);

const confirm = (command: ConfirmEmailAddress, state: EmailConfirmationState): EmailAddressConfirmed[] => {
  const { mailbox, requestId } = command.data;
  // Single use: once confirmed, every link of the mailbox (this one replayed included) is spent.
  if (state.status === 'confirmed')
    throw conflict('this email address is already confirmed: the link is used');
  const expiresAt = state.status === 'pending' ? state.requests[requestId] : undefined;
  if (expiresAt === undefined) throw invalidToken('is not a confirmation link this marketplace sent');
  if (command.metadata.now >= expiresAt) {
    throw invalidToken('has expired: subscribe again to receive a new link');
  }
  return [{ type: 'EmailAddressConfirmed', data: { mailbox, requestId, confirmedAt: command.metadata.now } }];
};

export const emailConfirmationDecider: Decider<
  EmailConfirmationCommand,
  EmailConfirmationEvent,
  EmailConfirmationState
> = {
  decide: (command, state) => {
    switch (command.type) {
      case 'RequestEmailConfirmation':
        return requestConfirmation(command, state);
      case 'ConfirmEmailAddress':
        return confirm(command, state);
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'EmailConfirmationRequested':
        return state.status === 'confirmed'
          ? state
          : {
              status: 'pending',
              requests: {
                ...(state.status === 'pending' ? state.requests : {}),
                [event.data.requestId]: event.data.expiresAt,
              },
            };
      case 'EmailAddressConfirmed':
        return { status: 'confirmed', confirmedAt: event.data.confirmedAt };
    }
  },
  initialState: () => ({ status: 'unknown' }),
};
