import { afterAll, beforeAll, describe } from '@jest/globals';
import type { Database } from '@marketplace/database';
import {
  dropSchema,
  freshSchemaName,
  TEST_ENGINE_CREATE_TIMEOUT_MS,
  contractTestEngines,
} from '@marketplace/database/testing';
import { createMemoryRateLimitStore, createPostgresRateLimitStore } from '../src/index.js';
import { rateLimitStoreContract } from '../src/testing/index.js';

describe('in-process rate-limit store', () => {
  rateLimitStoreContract(async () => createMemoryRateLimitStore());
});

describe.each(contractTestEngines())('PostgreSQL rate-limit store on $name', ({ create }) => {
  let db: Database;
  const schemas: string[] = [];

  beforeAll(async () => {
    db = await create();
  }, TEST_ENGINE_CREATE_TIMEOUT_MS);

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(db, schema);
    await db.close();
  });

  rateLimitStoreContract(async () => {
    const schema = freshSchemaName('ratelimit_test');
    schemas.push(schema);
    return createPostgresRateLimitStore({ db, schema });
  });
});
