import { forbidden, unauthenticated } from '@marketplace/platform';

export const ACCOUNT_ROLES = ['seller', 'buyer'] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

/** What an operator sends to open an account. */
export interface AccountDraft {
  readonly role: AccountRole;
  readonly name: string;
  readonly email: string;
  readonly company?: string | undefined;
  /** ISO 3166-1 alpha-2, upper case. */
  readonly country?: string | undefined;
}

/** Who an account is, as the operator who opened it recorded: what a buyer's quote requests carry. */
export interface AccountContact {
  readonly email: string;
  readonly name: string;
  readonly company?: string | undefined;
}

/**
 * How a caller proved who it is: an API key (named by its prefix) or a buyer's agent token (by its session, with
 * the prefix of the key it was issued for: revoking that key ends the token too).
 */
export type Credential =
  | { readonly kind: 'api_key'; readonly keyPrefix: string }
  | { readonly kind: 'agent_token'; readonly sessionId: string; readonly apiKeyPrefix: string };

/** The API key behind a credential: the key itself, or the one an agent token was issued for. */
export const apiKeyPrefixOfCredential = (credential: Credential): string =>
  credential.kind === 'api_key' ? credential.keyPrefix : credential.apiKeyPrefix;

/**
 * The caller behind a valid API key or agent token. Logged by account id, key prefix or session id, never by
 * key or token.
 */
export interface Principal {
  readonly accountId: number;
  readonly role: AccountRole;
  readonly credential: Credential;
}

/** An account and the key just issued to it; `apiKey` is the only copy of the key that will ever exist. */
export interface IssuedKey {
  readonly accountId: number;
  readonly role: AccountRole;
  readonly apiKey: string;
  readonly apiKeyPrefix: string;
}

/** The actor a principal's calls carry to the services (anonymous without one). */
export const actorOf = (principal: Principal | undefined): { kind: string; id: string } =>
  principal ? { kind: principal.role, id: String(principal.accountId) } : { kind: 'anonymous', id: '' };

/**
 * The seller behind an API key: the one check of every seller-only operation, REST and MCP alike
 * (docs/specification.md, "Accounts, keys and tokens"). Anonymous callers are 401, buyers 403; `what` names the operation.
 */
export const requireSeller = (principal: Principal | undefined, what: string): Principal => {
  if (principal === undefined) throw unauthenticated(`${what} needs the seller's X-MCP-API-Key`);
  if (principal.role !== 'seller') throw forbidden(`only seller accounts can ${what}`);
  return principal;
};
