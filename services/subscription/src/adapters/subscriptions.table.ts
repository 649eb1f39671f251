import type { Queryable } from '@marketplace/database';
import { quoteIdent } from '@marketplace/database';
import { LISTING_LIMITS } from '@marketplace/vocabulary';
import type { Channel, SavedSearchQuery, Subscription } from '../domain/subscription.js';
import type { WebhookSecretState } from '../domain/subscription.decider.js';
import type { MatchKeys, SavedSearches } from '../application/ports.js';

/** The key of "any category" or "any condition" in the match index. */
const ANY = '*';

type SubscriptionRow = {
  subscription_id: string;
  owner_account_id: string | number | null;
  query: SavedSearchQuery;
  channels: Channel[];
  created_at_ms: string | number;
};

const subscriptionOf = (row: SubscriptionRow): Subscription => ({
  subscriptionId: row.subscription_id,
  ...(row.owner_account_id === null ? {} : { ownerAccountId: Number(row.owner_account_id) }),
  query: row.query,
  channels: row.channels,
  createdAt: Number(row.created_at_ms),
});

const COLUMNS = 'subscription_id, owner_account_id, query, channels, created_at_ms';
/** The same columns of the table aliased `s`. */
const S_COLUMNS = COLUMNS.split(', ')
  .map((column) => `s.${column}`)
  .join(', ');

/**
 * The live subscriptions: written by the application in the transaction that appends the subscription's
 * events, read by the matcher through the match index and by the owner's queries.
 */
export class SubscriptionsTable implements SavedSearches {
  private readonly table: string;

  constructor(schema: string) {
    this.table = `${quoteIdent(schema)}.subscriptions`;
  }

  async insert(tx: Queryable, subscription: Subscription): Promise<void> {
    const { query } = subscription;
    await tx.query(
      `insert into ${this.table} (${COLUMNS}, category_key, condition_key, min_price_cents, max_price_cents)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        subscription.subscriptionId,
        subscription.ownerAccountId ?? null,
        query,
        // An array parameter would travel as a PostgreSQL array: jsonb needs the JSON text.
        JSON.stringify(subscription.channels),
        subscription.createdAt,
        query.category ?? ANY,
        query.condition ?? ANY,
        query.minPriceCents ?? 0,
        query.maxPriceCents ?? LISTING_LIMITS.maxPriceCents,
      ],
    );
  }

  async markDeleted(tx: Queryable, subscriptionId: string, deletedAt: number): Promise<void> {
    await tx.query(`update ${this.table} set deleted_at_ms = $2 where subscription_id = $1`, [
      subscriptionId,
      deletedAt,
    ]);
  }

  async rotateWebhookSecret(
    tx: Queryable,
    subscriptionId: string,
    { generation, previousValidUntil }: WebhookSecretState,
  ): Promise<void> {
    await tx.query(
      `update ${this.table} set secret_generation = $2, previous_secret_valid_until_ms = $3
       where subscription_id = $1`,
      [subscriptionId, generation, previousValidUntil ?? null],
    );
  }

  /** Which webhook secret signs a subscription's deliveries (deleted ones too: their queued deliveries). */
  async webhookSecretOf(db: Queryable, subscriptionId: string): Promise<WebhookSecretState | undefined> {
    const { rows } = await db.query<{
      secret_generation: number;
      previous_secret_valid_until_ms: string | number | null;
    }>(
      `select secret_generation, previous_secret_valid_until_ms from ${this.table} where subscription_id = $1`,
      [subscriptionId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      generation: row.secret_generation,
      ...(row.previous_secret_valid_until_ms === null
        ? {}
        : { previousValidUntil: Number(row.previous_secret_valid_until_ms) }),
    };
  }

  /** A live subscription of `ownerAccountId`, or undefined (also when it belongs to someone else). */
  async findOwned(
    db: Queryable,
    subscriptionId: string,
    ownerAccountId: number,
  ): Promise<Subscription | undefined> {
    const { rows } = await db.query<SubscriptionRow>(
      `select ${COLUMNS} from ${this.table}
       where subscription_id = $1 and owner_account_id = $2 and deleted_at_ms is null`,
      [subscriptionId, ownerAccountId],
    );
    return rows[0] && subscriptionOf(rows[0]);
  }

  /** The owner's live subscriptions, oldest first. */
  async listOwned(db: Queryable, ownerAccountId: number): Promise<Subscription[]> {
    const { rows } = await db.query<SubscriptionRow>(
      `select ${COLUMNS} from ${this.table}
       where owner_account_id = $1 and deleted_at_ms is null order by created_at_ms, subscription_id`,
      [ownerAccountId],
    );
    return rows.map(subscriptionOf);
  }

  /**
   * The live subscriptions whose category, condition and price range admit the listing: four range scans of
   * the match index (exact or any category × exact or any condition), whatever the number of subscriptions.
   * The remaining filters (text, quantities, country, bulk) are the caller's, on this short list.
   */
  async candidates(db: Queryable, listings: readonly MatchKeys[]): Promise<Subscription[][]> {
    const found: Subscription[][] = listings.map(() => []);
    if (listings.length === 0) return found;
    const { rows } = await db.query<SubscriptionRow & { at: string | number }>(
      `select l.at, ${S_COLUMNS}
       from unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
              with ordinality as l (category, condition, price_cents, created_at, at)
       join ${this.table} s
         on s.category_key in (l.category, '${ANY}') and s.condition_key in (l.condition, '${ANY}')
        and s.max_price_cents >= l.price_cents and s.min_price_cents <= l.price_cents
        and s.deleted_at_ms is null and s.created_at_ms <= l.created_at`,
      [
        listings.map((keys) => keys.category),
        listings.map((keys) => (keys.condition === '' ? ANY : keys.condition)),
        listings.map((keys) => keys.priceCents),
        listings.map((keys) => keys.createdAt),
      ],
    );
    for (const row of rows) found[Number(row.at) - 1]!.push(subscriptionOf(row));
    return found;
  }
}
