import { forbidden } from '@marketplace/platform';
import type { CallActor } from './internal-auth.js';

/** The actor kinds that are accounts (an API key's or agent token's). */
export const ACCOUNT_ACTOR_KINDS: readonly string[] = ['buyer', 'seller'];

/**
 * The account a request names, once checked against the actor of the call's verified internal token (which the
 * server middleware put in the request's `actor` field): another account, or an actor of another kind, is
 * PERMISSION_DENIED, so a valid token for one account cannot act for another (docs/security.md, "Internal
 * calls").
 */
export const actingAccountId = (
  actor: CallActor | undefined,
  accountId: number,
  path: string,
  kinds: readonly string[] = ACCOUNT_ACTOR_KINDS,
): number => {
  if (actor === undefined || !kinds.includes(actor.kind) || actor.id !== String(accountId)) {
    throw forbidden(`${path} ${accountId} is not the authenticated caller's account`);
  }
  return accountId;
};
