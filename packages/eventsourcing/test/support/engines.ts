import { migrate, type Database } from '@marketplace/database';
import { dropSchema, freshSchemaName } from '@marketplace/database/testing';
import { eventStoreMigrations, projectionMigrations } from '../../src/index.js';

/** A fresh schema with the event store's and the projection helper's tables, for one test file. */
export const migratedSchema = async (db: Database, prefix: string): Promise<string> => {
  const schema = freshSchemaName(prefix);
  await migrate(db, schema, [...eventStoreMigrations, ...projectionMigrations]);
  return schema;
};

export { dropSchema };
