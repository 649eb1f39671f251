import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { CapturedLog, TestGateway, type Answer, backendsAt } from './support/gateway-harness.js';
import { InMemoryBackends } from './support/in-memory-backends.js';

const SEARCH = '/api/ucp/catalog/search';

const problemPaths = (answer: Answer): string[] => {
  expect(answer.status).toBe(400);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return ((answer.body as { errors: { path: string }[] }).errors ?? []).map(({ path }) => path).sort();
};

// The 200 answers come from the real catalog: e2e/test/catalog-semantic-search.e2e.test.ts.
describe.each(testEngines())('POST /api/ucp/catalog/search on $name', ({ create }) => {
  let db: Database;
  let backends: InMemoryBackends;
  let gateway: TestGateway;

  beforeAll(async () => {
    db = await create();
    const log = new CapturedLog();
    backends = await InMemoryBackends.start(log.logger);
    gateway = await TestGateway.start(db, { services: backendsAt(backends.address) }, log);
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backends?.stop();
    await db?.close();
  });

  it('names every invalid field in one 400 problem', async () => {
    const answer = await gateway.postJson(SEARCH, {
      query: '',
      category: 'boats',
      condition: 'used',
      max_price: -1,
      limit: 51,
      sort: 'price',
    });
    expect(problemPaths(answer)).toEqual(['category', 'condition', 'limit', 'max_price', 'query', 'sort']);
  });

  it('requires the query and a JSON object', async () => {
    expect(problemPaths(await gateway.postJson(SEARCH, { limit: 5 }))).toEqual(['query']);
    expect(problemPaths(await gateway.postJson(SEARCH, ['laptops']))).toEqual(['(root)']);
    expect(problemPaths(await gateway.postJson(SEARCH, { query: 'x'.repeat(1_001) }))).toEqual(['query']);
    expect(problemPaths(await gateway.postJson(SEARCH, { query: 'laptops', limit: 2.5 }))).toEqual(['limit']);
  });

  it('answers 503 when the catalog has no embedding provider (docs/specification.md, "Errors")', async () => {
    const answer = await gateway.postJson(SEARCH, { query: 'laptops for a school' });

    expect(answer.status).toBe(503);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.body).toMatchObject({ status: 503, detail: expect.stringMatching(/embedding provider/) });
  });

  it('takes only POST with a JSON body', async () => {
    expect((await gateway.call(SEARCH)).status).toBe(405);
    const text = await gateway.call(SEARCH, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'laptops',
    });
    expect(text.status).toBe(415);
  });
});
