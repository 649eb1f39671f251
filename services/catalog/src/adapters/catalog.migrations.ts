import type { Migration } from '@marketplace/database';
import { projectionMigrations } from '@marketplace/eventsourcing';

/**
 * The catalog schema: the products read model (the document as served, its stream version, and the creation
 * time the search index loads in), the projection's record of applied events, and the projection's generation
 * (bumped by a rebuild, which replays the log under a new consumer group).
 */
export const catalogMigrations: readonly Migration[] = [
  ...projectionMigrations,
  {
    id: 'catalog-001-products',
    sql: (schema) => `
      create table ${schema}.products (
        product_id text primary key,
        version bigint not null,
        created_at_ms bigint not null,
        document jsonb not null,
        projected_at timestamptz not null default now()
      );
      create index products_creation_order on ${schema}.products (created_at_ms, product_id);`,
  },
  {
    id: 'catalog-002-projection-generations',
    sql: (schema) => `
      create table ${schema}.projection_generations (
        projection text primary key,
        generation integer not null check (generation >= 1)
      );`,
  },
  {
    id: 'catalog-003-sellers',
    sql: (schema) => `
      create table ${schema}.sellers (
        account_id bigint primary key,
        version bigint not null,
        name text not null,
        company text not null,
        country text not null
      );`,
  },
  {
    // The feed's stable order: product number ascending, over public products only (the visibility rule of
    // products.table.ts as SQL).
    id: 'catalog-004-public-product-order',
    sql: (schema) => `
      alter table ${schema}.products
        add column product_number bigint generated always as (substring(product_id from 9)::bigint) stored;
      create index products_public_order on ${schema}.products (product_number)
        where (document->>'promotePublicly')::boolean;`,
  },
  {
    // Listing embeddings, computed once per text and embedding space: a restart or a rebuild reuses them
    // instead of asking the provider again (only the vector index's graph is rebuilt in memory).
    id: 'catalog-005-product-embeddings',
    sql: (schema) => `
      create table ${schema}.product_embeddings (
        product_id text primary key,
        space text not null,
        text_sha256 text not null,
        vector bytea not null
      );`,
  },
];
