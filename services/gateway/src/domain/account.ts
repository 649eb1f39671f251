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

/** The caller behind a valid API key. Logged by account id and key prefix, never by key. */
export interface Principal {
  readonly accountId: number;
  readonly role: AccountRole;
  readonly keyPrefix: string;
}

/** An account and the key just issued to it; `apiKey` is the only copy of the key that will ever exist. */
export interface IssuedKey {
  readonly accountId: number;
  readonly role: AccountRole;
  readonly apiKey: string;
  readonly apiKeyPrefix: string;
}
