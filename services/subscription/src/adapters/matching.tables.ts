import type { Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import type { MatchedProduct } from '../domain/match-notification.js';
import type { ResourceMatch, SearchMatches } from '../application/ports.js';

/** How many matches the `mcp_resource` channel keeps per subscription (docs/specification.md, "Saved searches"). */
export const RESOURCE_MATCHES_KEPT = 100;

/** Sellers' countries (from the account events), the match record and the resources' recent matches. */
export class MatchingTables implements SearchMatches {
  private readonly sellers: string;
  private readonly matches: string;
  private readonly resourceMatches: string;

  constructor(schema: string) {
    const quoted = quoteIdent(schema);
    this.sellers = `${quoted}.sellers`;
    this.matches = `${quoted}.matches`;
    this.resourceMatches = `${quoted}.resource_matches`;
  }

  /** Stores a seller's country unless a newer version of the account is already here. */
  async saveSeller(
    tx: Queryable,
    seller: { accountId: number; country: string; version: number },
  ): Promise<void> {
    await tx.query(
      `insert into ${this.sellers} (account_id, country, version) values ($1, $2, $3)
       on conflict (account_id) do update set country = excluded.country, version = excluded.version
         where ${this.sellers}.version < excluded.version`,
      [seller.accountId, seller.country, seller.version],
    );
  }

  /** The seller's country: '' when the account has none, undefined while the account is unknown. */
  async sellerCountry(db: Queryable, accountId: number): Promise<string | undefined> {
    const { rows } = await db.query<{ country: string }>(
      `select country from ${this.sellers} where account_id = $1`,
      [accountId],
    );
    return rows[0]?.country;
  }

  /**
   * Records that these subscriptions matched the product and returns those that had not matched it before:
   * the primary key makes a redelivered listing event match (and notify) nobody twice.
   */
  async recordNew(
    tx: Queryable,
    productId: string,
    subscriptionIds: readonly string[],
    matchedAt: number,
  ): Promise<Set<string>> {
    if (subscriptionIds.length === 0) return new Set();
    const { rows } = await tx.query<{ subscription_id: string }>(
      `insert into ${this.matches} (subscription_id, product_id, matched_at_ms)
       select id, $2, $3 from unnest($1::text[]) as id
       on conflict do nothing returning subscription_id`,
      [subscriptionIds, productId, matchedAt],
    );
    return new Set(rows.map((row) => row.subscription_id));
  }

  /** Adds a match to each subscription's resource and forgets what falls beyond the last 100. */
  async addToResources(
    tx: Queryable,
    subscriptionIds: readonly string[],
    match: ResourceMatch,
  ): Promise<void> {
    if (subscriptionIds.length === 0) return;
    await tx.query(
      `insert into ${this.resourceMatches} (subscription_id, product_id, matched_at_ms, product)
       select id, $2, $3, $4 from unnest($1::text[]) as id on conflict do nothing`,
      [subscriptionIds, match.productId, match.matchedAt, match.product],
    );
    await tx.query(
      `delete from ${this.resourceMatches} r using (
         select subscription_id, product_id,
                row_number() over (partition by subscription_id order by matched_at_ms desc, product_id desc) as rank
         from ${this.resourceMatches} where subscription_id = any($1::text[])
       ) ranked
       where ranked.rank > $2 and r.subscription_id = ranked.subscription_id and r.product_id = ranked.product_id`,
      [subscriptionIds, RESOURCE_MATCHES_KEPT],
    );
  }

  /** A subscription's resource matches, newest first. */
  async recentMatches(db: Queryable, subscriptionId: string): Promise<ResourceMatch[]> {
    const { rows } = await db.query<{
      product_id: string;
      matched_at_ms: string | number;
      product: MatchedProduct;
    }>(
      `select product_id, matched_at_ms, product from ${this.resourceMatches}
       where subscription_id = $1 order by matched_at_ms desc, product_id desc limit $2`,
      [subscriptionId, RESOURCE_MATCHES_KEPT],
    );
    return rows.map((row) => ({
      productId: row.product_id,
      matchedAt: Number(row.matched_at_ms),
      product: row.product,
    }));
  }
}
