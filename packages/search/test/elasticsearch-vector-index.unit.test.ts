import { beforeEach, describe, expect, it } from '@jest/globals';
import type { MockPattern } from '@elastic/elasticsearch-mock';
import {
  createElasticsearchVectorIndex,
  MAX_VECTOR_CANDIDATES,
  vectorIndexTemplateBody,
} from '../src/index.js';
import type { ContractPayload } from '../src/testing/index.js';
import { contractDocument, vectorAt } from '../src/testing/index.js';
import { conflict, mockedCluster } from './support/mocked-elasticsearch.js';

const ALIAS = 'catalog-products_vectors_0123abcd';
const publicOnly = { visibility: 'public' } as const;

/** A kNN hit as Elasticsearch answers it: cosine scored (1 + cos) / 2, the vector's copy in `_source`. */
const hitOf = (n: number, degrees: number, cosine = Math.cos((degrees * Math.PI) / 180)) => {
  const { version: _version, ...source } = contractDocument(n);
  return {
    _id: `product_${n}`,
    _score: (1 + cosine) / 2,
    _version: 2,
    _source: { ...source, embeddingCopy: { values: Array.from(vectorAt(degrees)) } },
  };
};

/**
 * Request building and answer mapping against the official client's mock. The mock answers what each test
 * gives it: the kNN behaviour itself is the contract suite's, on a real cluster (ELASTICSEARCH_URL).
 */
describe('Elasticsearch VectorIndex (request building, mocked cluster)', () => {
  let cluster: ReturnType<typeof mockedCluster>;
  let searches: MockPattern[];
  let answers: ((params: MockPattern) => Record<string, unknown>)[];

  beforeEach(() => {
    cluster = mockedCluster(ALIAS);
    searches = [];
    answers = [];
    cluster.mock.add({ method: 'POST', path: `/${ALIAS}/_search` }, (params: MockPattern) => {
      searches.push(params);
      return answers.shift()?.(params) ?? { hits: { hits: [] } };
    });
  });

  const open = () =>
    createElasticsearchVectorIndex<ContractPayload>({ client: cluster.client, alias: ALIAS, dimensions: 3 });

  it('maps the embedding as an indexed cosine dense_vector and keeps a copy Elasticsearch never parses', async () => {
    await open();
    const { mappings } = vectorIndexTemplateBody(3);
    expect(mappings?.properties?.['embedding']).toEqual({
      type: 'dense_vector',
      dims: 3,
      index: true,
      similarity: 'cosine',
    });
    expect(mappings?.properties?.['embeddingCopy']).toEqual({ type: 'object', enabled: false });
    expect(cluster.requests[0]?.body).toMatchObject({ index_patterns: [`${ALIAS}-*`] });
  });

  it('asks kNN for the nearest candidates with no filter inside, and filters them with post_filter', async () => {
    answers.push(() => ({ hits: { hits: [hitOf(4, 60), hitOf(3, 10)] } }));
    const index = await open();

    const hits = await index.search({
      vector: vectorAt(0),
      filters: { ...publicOnly, category: 'electronics', condition: 'overstock', maxPriceCents: 900 },
      limit: 7,
    });

    expect(searches).toHaveLength(1);
    const body = searches[0]!.body as Record<string, unknown>;
    expect(body['knn']).toEqual({
      field: 'embedding',
      query_vector: Array.from(vectorAt(0)),
      k: MAX_VECTOR_CANDIDATES,
      num_candidates: MAX_VECTOR_CANDIDATES,
    });
    expect(body['post_filter']).toEqual({
      bool: {
        filter: [
          { term: { public: true } },
          { term: { category: 'electronics' } },
          { term: { condition: 'overstock' } },
          { range: { priceCents: { lte: 900 } } },
        ],
      },
    });
    expect(body).toMatchObject({ size: 7, version: true, _source: { excludes: ['embedding'] } });
    expect(body).not.toHaveProperty('query');
    // Most similar first, the cosine from the score, the document without its vectors and with its version.
    expect(hits.map((hit) => hit.id)).toEqual(['product_3', 'product_4']);
    expect(hits[0]!.similarity).toBeCloseTo(Math.cos(Math.PI / 18), 6);
    expect(hits[1]!.similarity).toBeCloseTo(0.5, 6);
    expect(hits[0]!.document).toEqual(contractDocument(3, { version: 2 }));
  });

  it('leaves out hits of similarity 0 or less, and sends nothing for a zero vector', async () => {
    answers.push(() => ({ hits: { hits: [hitOf(1, 30), hitOf(2, 90, 0), hitOf(3, 120)] } }));
    const index = await open();

    expect(
      (await index.search({ vector: vectorAt(0), filters: publicOnly, limit: 3 })).map((h) => h.id),
    ).toEqual(['product_1']);
    expect(await index.search({ vector: new Float32Array(3), filters: publicOnly, limit: 3 })).toEqual([]);
    expect(searches).toHaveLength(1);
  });

  it('with feedback, searches again with the query moved towards the nearest hits of the first search', async () => {
    answers.push(() => ({ hits: { hits: [hitOf(1, 20)] } }));
    answers.push(() => ({ hits: { hits: [hitOf(1, 10), hitOf(3, 20)] } }));
    const index = await open();

    const hits = await index.search({
      vector: vectorAt(0),
      filters: publicOnly,
      limit: 5,
      feedback: { hits: 1, weight: 1 },
    });

    expect(searches.map((search) => (search.body as { size: number }).size)).toEqual([1, 5]);
    const moved = (searches[1]!.body as { knn: { query_vector: number[] } }).knn.query_vector;
    // Halfway between the query (0°) and its nearest hit (20°): 10°, before normalisation.
    expect(Math.atan2(moved[1]!, moved[0]!)).toBeCloseTo(Math.PI / 18, 5);
    expect((searches[1]!.body as Record<string, unknown>)['post_filter']).toEqual(
      (searches[0]!.body as Record<string, unknown>)['post_filter'],
    );
    expect(hits.map((hit) => hit.id)).toEqual(['product_1', 'product_3']);
    expect(hits[0]).not.toHaveProperty('vector');
  });

  it('indexes the vector and its copy with the external version; a 409 is stale', async () => {
    let conflicting = false;
    cluster.mock.add({ method: 'PUT', path: `/${ALIAS}/_doc/product_1` }, (params: MockPattern) => {
      cluster.requests.push(params);
      return (conflicting ? conflict() : { result: 'created' }) as never;
    });
    const index = await open();

    expect(await index.upsert(contractDocument(1, { version: 3 }), vectorAt(0))).toBe('applied');
    const sent = cluster.requests.at(-1)!;
    expect(sent.querystring).toMatchObject({ version: '3', version_type: 'external', refresh: 'wait_for' });
    expect(sent.body).toMatchObject({
      id: 'product_1',
      embedding: [1, 0, 0],
      embeddingCopy: { values: [1, 0, 0] },
    });
    expect(sent.body).not.toHaveProperty('version');
    conflicting = true;
    expect(await index.upsert(contractDocument(1, { version: 2 }), vectorAt(0))).toBe('stale');
  });

  it('writes a load as one bulk: a zero vector as a versioned delete (a cosine field refuses it), removals too', async () => {
    const answers = [
      [{ delete: { _id: 'product_1', status: 404 } }, { index: { _id: 'product_2', status: 409 } }],
      [{ delete: { _id: 'product_3', status: 200 } }, { delete: { _id: 'product_4', status: 409 } }],
    ];
    cluster.mock.add({ method: 'POST', path: '/_bulk' }, (params: MockPattern) => {
      cluster.requests.push(params);
      return { errors: true, items: answers.shift() };
    });
    const index = await open();

    const outcomes = await index.upsertMany([
      { document: contractDocument(1, { version: 4 }), vector: new Float32Array(3) },
      { document: contractDocument(2), vector: vectorAt(5) },
    ]);
    const removed = await index.removeMany([
      { id: 'product_3', version: 2 },
      { id: 'product_4', version: 1 },
    ]);

    expect(outcomes).toEqual(['applied', 'stale']);
    expect(removed).toEqual(['applied', 'stale']);
    const [load, removal] = cluster.requests.slice(-2);
    expect(load?.querystring).toMatchObject({ refresh: 'wait_for' });
    expect((load?.body as Record<string, unknown>[]).slice(0, 2)).toEqual([
      { delete: { _index: ALIAS, _id: 'product_1', version: 4, version_type: 'external' } },
      { index: { _index: ALIAS, _id: 'product_2', version: 1, version_type: 'external' } },
    ]);
    expect(removal?.body).toEqual([
      { delete: { _index: ALIAS, _id: 'product_3', version: 2, version_type: 'external' } },
      { delete: { _index: ALIAS, _id: 'product_4', version: 1, version_type: 'external' } },
    ]);
  });

  it('rejects vectors of other dimensions before sending anything', async () => {
    const index = await open();
    const sent = cluster.requests.length;
    await expect(index.upsert(contractDocument(1), new Float32Array(4))).rejects.toThrow(RangeError);
    await expect(
      index.search({ vector: new Float32Array(2), filters: publicOnly, limit: 1 }),
    ).rejects.toThrow(RangeError);
    expect(cluster.requests).toHaveLength(sent);
    expect(searches).toHaveLength(0);
    await expect(
      createElasticsearchVectorIndex({ client: cluster.client, alias: ALIAS, dimensions: 0 }),
    ).rejects.toThrow(RangeError);
  });
});
