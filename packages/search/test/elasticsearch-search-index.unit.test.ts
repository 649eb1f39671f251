import { beforeEach, describe, expect, it } from '@jest/globals';
import type { errors } from '@elastic/elasticsearch';
import type { MockPattern } from '@elastic/elasticsearch-mock';
import { createElasticsearchSearchIndex, indexTemplateBody } from '../src/index.js';
import type { ContractPayload } from '../src/testing/index.js';
import { contractDocument } from '../src/testing/index.js';
import { conflict, mockedCluster, ResponseError } from './support/mocked-elasticsearch.js';

const ALIAS = 'catalog-products';

describe('Elasticsearch SearchIndex (request building, mocked cluster)', () => {
  let cluster: ReturnType<typeof mockedCluster>;

  beforeEach(() => {
    cluster = mockedCluster(ALIAS);
  });

  const open = () =>
    createElasticsearchSearchIndex<ContractPayload>({ client: cluster.client, alias: ALIAS });

  it('installs the index template and creates generation 1 behind the alias on first use', async () => {
    await open();

    const [template, , create] = cluster.requests;
    expect(template?.body).toMatchObject({ index_patterns: [`${ALIAS}-*`] });
    expect(create?.path).toBe(`/${ALIAS}-1`);
    expect(create?.body).toEqual({ aliases: { [ALIAS]: { is_write_index: true } } });
  });

  it('maps BM25 text with the listing analyzers, keywords for filters, and the embedding when asked', () => {
    const { mappings, settings } = indexTemplateBody(384);
    expect(mappings?.properties?.['title']).toEqual({
      type: 'text',
      analyzer: 'listing_text',
      search_analyzer: 'listing_query',
    });
    expect(mappings?.properties?.['category']).toEqual({ type: 'keyword' });
    expect(mappings?.properties?.['embedding']).toEqual({
      type: 'dense_vector',
      dims: 384,
      index: true,
      similarity: 'cosine',
    });
    expect(JSON.stringify(settings)).toContain('"catenate_all":true');
    expect(indexTemplateBody().mappings?.properties?.['embedding']).toBeUndefined();
  });

  it('indexes with the external version and waits for refresh; a 409 is stale', async () => {
    let answer: () => Record<string, unknown> | errors.ResponseError = () => ({ result: 'created' });
    cluster.mock.add({ method: 'PUT', path: `/${ALIAS}/_doc/product_1` }, (params: MockPattern) => {
      cluster.requests.push(params);
      return answer() as Record<string, unknown>;
    });
    const index = await open();

    expect(await index.upsert(contractDocument(1, { version: 3, discountPercent: 40 }))).toBe('applied');
    const sent = cluster.requests.at(-1)!;
    expect(sent.querystring).toMatchObject({ version: '3', version_type: 'external', refresh: 'wait_for' });
    expect(sent.body).toMatchObject({ id: 'product_1', discountPercent: 40, payload: { sku: 'SKU-1' } });
    expect(sent.body).not.toHaveProperty('version');

    answer = conflict;
    expect(await index.upsert(contractDocument(1, { version: 2 }))).toBe('stale');
  });

  it('bulk-indexes with external versions and reports each item, 409 as stale', async () => {
    cluster.mock.add({ method: 'POST', path: '/_bulk' }, (params: MockPattern) => {
      cluster.requests.push(params);
      return {
        errors: true,
        items: [
          { index: { _id: 'product_1', status: 201 } },
          { index: { _id: 'product_2', status: 409, error: { type: 'version_conflict_engine_exception' } } },
        ],
      };
    });
    const index = await open();

    const outcomes = await index.upsertMany([contractDocument(1), contractDocument(2, { version: 4 })]);

    expect(outcomes).toEqual(['applied', 'stale']);
    const sent = cluster.requests.at(-1)!;
    expect(sent.querystring).toMatchObject({ refresh: 'wait_for' });
    expect((sent.body as Record<string, unknown>[])[2]).toEqual({
      index: { _index: ALIAS, _id: 'product_2', version: 4, version_type: 'external' },
    });
  });

  it('deletes with the external version: stale on 409, applied (tombstone) on 404', async () => {
    let status = 404;
    cluster.mock.add({ method: 'DELETE', path: `/${ALIAS}/_doc/product_1` }, (params: MockPattern) => {
      cluster.requests.push(params);
      return new ResponseError({
        body: {},
        statusCode: status,
        headers: {},
        warnings: null,
        meta: {} as never,
      }) as never;
    });
    const index = await open();

    expect(await index.remove('product_1', 5)).toBe('applied');
    expect(cluster.requests.at(-1)?.querystring).toMatchObject({ version: '5', version_type: 'external' });
    status = 409;
    expect(await index.remove('product_1', 4)).toBe('stale');
  });

  it('searches with AND over title and description, every filter, a deterministic order and exact totals', async () => {
    cluster.mock.add({ method: 'POST', path: `/${ALIAS}/_search` }, (params: MockPattern) => {
      cluster.requests.push(params);
      const { version: _version, ...source } = contractDocument(7, { title: 'Dell laptop' });
      return {
        hits: {
          total: { value: 31, relation: 'eq' },
          hits: [{ _id: 'product_7', _score: 2.5, _version: 3, _source: source }],
        },
      };
    });
    const index = await open();

    const result = await index.search({
      text: 'dell laptops',
      filters: {
        visibility: 'public',
        category: 'electronics',
        condition: 'overstock',
        minPriceCents: 100,
        maxPriceCents: 900,
        minDiscountPercent: 30,
      },
      limit: 10,
      offset: 20,
    });

    expect(result).toEqual({
      total: 31,
      hits: [
        { id: 'product_7', score: 2.5, document: contractDocument(7, { title: 'Dell laptop', version: 3 }) },
      ],
    });
    expect(cluster.requests.at(-1)?.body).toEqual({
      from: 20,
      size: 10,
      track_total_hits: true,
      version: true,
      query: {
        bool: {
          must: {
            multi_match: {
              query: 'dell laptops',
              fields: ['title^2', 'description'],
              type: 'cross_fields',
              operator: 'and',
              zero_terms_query: 'none',
            },
          },
          filter: [
            { term: { public: true } },
            { term: { category: 'electronics' } },
            { term: { condition: 'overstock' } },
            { range: { priceCents: { gte: 100, lte: 900 } } },
            { range: { discountPercent: { gte: 30 } } },
          ],
        },
      },
      sort: [{ _score: { order: 'desc' } }, { createdAtMs: { order: 'desc' } }, { id: { order: 'asc' } }],
    });
  });

  it('lists newest first without text, and refuses pages beyond the result window', async () => {
    cluster.mock.add({ method: 'POST', path: `/${ALIAS}/_search` }, (params: MockPattern) => {
      cluster.requests.push(params);
      return { hits: { total: { value: 0, relation: 'eq' }, hits: [] } };
    });
    const index = await open();

    await index.search({ filters: { visibility: 'any' }, limit: 5, offset: 0 });

    expect(cluster.requests.at(-1)?.body).toMatchObject({
      query: { bool: { filter: [] } },
      sort: [{ createdAtMs: { order: 'desc' } }, { id: { order: 'asc' } }],
    });
    await expect(
      index.search({ filters: { visibility: 'any' }, limit: 100, offset: 99_950 }),
    ).rejects.toThrow(RangeError);
  });

  it('clears by swapping the alias to a new generation in one update, then deleting the old index', async () => {
    cluster.mock.add({ method: 'GET', path: `/_alias/${ALIAS}` }, (params: MockPattern) => {
      cluster.requests.push(params);
      return { [`${ALIAS}-1`]: { aliases: { [ALIAS]: {} } } };
    });
    cluster.mock.add({ method: 'PUT', path: `/${ALIAS}-2` }, (params: MockPattern) => {
      cluster.requests.push(params);
      return { acknowledged: true };
    });
    cluster.mock.add({ method: 'POST', path: '/_aliases' }, (params: MockPattern) => {
      cluster.requests.push(params);
      return { acknowledged: true };
    });
    cluster.mock.add({ method: 'DELETE', path: `/${ALIAS}-1` }, (params: MockPattern) => {
      cluster.requests.push(params);
      return { acknowledged: true };
    });
    const index = await open();

    await index.clear();

    const [, create, swap, drop] = cluster.requests.slice(-4);
    expect(create?.path).toBe(`/${ALIAS}-2`);
    expect(swap?.body).toEqual({
      actions: [
        { remove: { index: `${ALIAS}-1`, alias: ALIAS } },
        { add: { index: `${ALIAS}-2`, alias: ALIAS, is_write_index: true } },
      ],
    });
    expect(drop?.path).toBe(`/${ALIAS}-1`);
  });
});
