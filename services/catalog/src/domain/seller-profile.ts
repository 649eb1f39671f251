/**
 * What product details show of a seller (docs/specification.md, "Catalog endpoints": name, company, country), projected from the seller's
 * account events. Never the email: the catalog holds only what every buyer may see.
 */
export interface SellerProfile {
  readonly accountId: number;
  readonly name: string;
  /** '' when the account has none. */
  readonly company: string;
  /** ISO 3166-1 alpha-2, or '' when the account has none. */
  readonly country: string;
  /** The version of the account's stream this profile reflects. */
  readonly version: number;
}

/** What the catalog learns from one account event; buyers' accounts teach it nothing. */
export type AccountFact = { readonly type: 'SellerAccountCreated'; readonly profile: SellerProfile };
