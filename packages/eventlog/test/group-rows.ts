import type { Database } from '@marketplace/database';

/**
 * The consumer groups' rows of a topic in the group tables of `schema` (the embedded log's, and the NATS log's
 * consumers' database): what a consumer of the topic left in the database.
 */
export const groupRowsOf = async (db: Database, schema: string, topic: string): Promise<string[]> => {
  const { rows } = await db.query<{ row: string }>(
    `select 'offsets ' || group_name || ' ' || partition as row from "${schema}".consumer_offsets where topic = $1
     union all
     select 'member ' || group_name || ' ' || member_id from "${schema}".group_members where topic = $1
     order by 1`,
    [topic],
  );
  return rows.map(({ row }) => row);
};
