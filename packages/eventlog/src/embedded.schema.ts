import type { Migration } from '@marketplace/database';

/**
 * The embedded log's tables. Offsets come from one sequence, so they grow along each partition (and across
 * them); `committed_offset` is the last offset a group handled in a partition (0: none yet). A partition's
 * `owner` holds it until `lease_until`; members announce themselves in `group_members` (see the group member).
 */
export const EMBEDDED_EVENT_LOG_MIGRATIONS: readonly Migration[] = [
  {
    id: '001-event-log',
    sql: (schema) => `
      create sequence ${schema}.message_offset;
      create table ${schema}.topics (
        topic text primary key,
        partitions integer not null check (partitions > 0)
      );
      create table ${schema}.messages (
        topic text not null,
        partition integer not null,
        "offset" bigint not null,
        key text not null,
        headers jsonb not null,
        value bytea not null,
        published_at timestamptz not null default now(),
        primary key (topic, partition, "offset")
      );
      create table ${schema}.consumer_offsets (
        topic text not null,
        group_name text not null,
        partition integer not null,
        committed_offset bigint not null,
        owner text,
        lease_until timestamptz,
        primary key (topic, group_name, partition)
      );
      create table ${schema}.group_members (
        topic text not null,
        group_name text not null,
        member_id text not null,
        alive_until timestamptz not null,
        primary key (topic, group_name, member_id)
      );
    `,
  },
];
