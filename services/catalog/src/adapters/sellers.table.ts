import { quoteIdent } from '@marketplace/database';
import type { Queryable } from '@marketplace/database';
import type { SellerProfile } from '../domain/seller-profile.js';

export interface SellersTable {
  find(db: Queryable, accountId: number): Promise<SellerProfile | undefined>;
  /** Stores the profile unless the table already holds this version of it or a newer one. */
  save(tx: Queryable, profile: SellerProfile): Promise<void>;
  deleteAll(tx: Queryable): Promise<void>;
}

type SellerRow = {
  account_id: string | number;
  version: string | number;
  name: string;
  company: string;
  country: string;
};

/** The sellers table of the catalog schema: one public profile per seller account. */
export const sellersTable = (schema: string): SellersTable => {
  const table = `${quoteIdent(schema)}.sellers`;
  return {
    async find(db, accountId) {
      const { rows } = await db.query<SellerRow>(
        `select account_id, version, name, company, country from ${table} where account_id = $1`,
        [accountId],
      );
      const row = rows[0];
      return row === undefined
        ? undefined
        : {
            accountId: Number(row.account_id),
            version: Number(row.version),
            name: row.name,
            company: row.company,
            country: row.country,
          };
    },
    async deleteAll(tx) {
      await tx.query(`delete from ${table}`);
    },
    async save(tx, profile) {
      await tx.query(
        `insert into ${table} (account_id, version, name, company, country) values ($1, $2, $3, $4, $5)
         on conflict (account_id) do update
           set version = excluded.version, name = excluded.name, company = excluded.company,
               country = excluded.country
           where ${table}.version < excluded.version`,
        [profile.accountId, profile.version, profile.name, profile.company, profile.country],
      );
    },
  };
};
