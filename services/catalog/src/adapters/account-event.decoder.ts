import { accountV1 } from '@marketplace/proto';
import type { AccountFact } from '../domain/seller-profile.js';

/**
 * protobuf `AccountEvent` → what the catalog keeps: a seller's public profile. Undefined for an event that
 * carries nothing for the catalog (a buyer's account, or a kind this version does not know); bytes that do
 * not decode throw, so the log redelivers rather than losing the event.
 */
export const decodeAccountEvent = (bytes: Uint8Array): AccountFact | undefined => {
  const event = accountV1.AccountEvent.decode(bytes);
  if (event.payload?.$case !== 'created' || event.payload.value.role !== 'seller') return undefined;
  if (!Number.isSafeInteger(event.accountId) || event.accountId < 1 || event.version < 1) {
    throw new Error(`account event ${event.eventId} has a malformed account id or version`);
  }
  const { name, company, country } = event.payload.value;
  return {
    type: 'SellerAccountCreated',
    profile: { accountId: event.accountId, name, company, country, version: event.version },
  };
};
