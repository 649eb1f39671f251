import type { DomainEvent } from '@marketplace/eventsourcing';
import type { AccountDraft } from '../../../edge/account.js';

/** The stream type of accounts: selects the topic `marketplace.account.v1`. */
export const ACCOUNT_STREAM_TYPE = 'account';

/** `account_<id>`: the stream id and the log key of an account's events. */
export const accountStreamId = (accountId: number): string => `account_${accountId}`;

/**
 * An operator opened an account. State-carrying: other services (the catalog's seller names, the listing
 * service's staleness emails) keep their own copy of the profile from this event alone.
 */
export type AccountCreated = DomainEvent<'AccountCreated', AccountDraft & { readonly accountId: number }>;

export type AccountEvent = AccountCreated;
