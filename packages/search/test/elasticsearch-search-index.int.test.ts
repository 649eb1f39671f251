import { randomBytes } from 'node:crypto';
import { describe, it } from '@jest/globals';
import { Client } from '@elastic/elasticsearch';
import { createElasticsearchSearchIndex, createElasticsearchVectorIndex } from '../src/index.js';
import type { ElasticsearchSearchIndex, ElasticsearchVectorIndex } from '../src/index.js';
import type { ContractPayload } from '../src/testing/index.js';
import { searchIndexContract, vectorIndexContract } from '../src/testing/index.js';

const url = process.env['ELASTICSEARCH_URL'];

if (url === undefined) {
  describe('SearchIndex contract: Elasticsearch', () => {
    it.skip('runs the text and kNN contracts only when ELASTICSEARCH_URL points at a cluster', () =>
      undefined);
  });
} else {
  const client = new Client({ node: url, requestTimeout: 10_000 });
  searchIndexContract('Elasticsearch', {
    create: () =>
      createElasticsearchSearchIndex<ContractPayload>({
        client,
        alias: `contract-${randomBytes(4).toString('hex')}`,
      }),
    destroy: async (index) => {
      await client.indices.delete({
        index: await (index as ElasticsearchSearchIndex<ContractPayload>).currentIndex(),
      });
    },
  });
  vectorIndexContract('Elasticsearch kNN', {
    create: () =>
      createElasticsearchVectorIndex<ContractPayload>({
        client,
        alias: `contract-vectors-${randomBytes(4).toString('hex')}`,
        dimensions: 3,
      }),
    destroy: async (index) => {
      await client.indices.delete({
        index: await (index as ElasticsearchVectorIndex<ContractPayload>).currentIndex(),
      });
    },
  });
}
