import type { Client, estypes } from '@elastic/elasticsearch';
import {
  AliasedGenerations,
  filterClauses,
  indexTemplateBody,
  storedOf,
  type StoredDocument,
} from '../elasticsearch-search-index.js';
import { assertVersion } from '../search-input.js';
import type { SearchDocument, WriteOutcome } from '../search-index.port.js';
import { MAX_VECTOR_CANDIDATES, movedTowards } from './hnsw-vector-index.js';
import type { VectorEntry, VectorHit, VectorIndex, VectorQuery, VectorRemoval } from './vector-index.port.js';

export interface ElasticsearchVectorIndexOptions {
  readonly client: Client;
  /** The alias searches and writes go through; each generation is a concrete index `<alias>-<n>`. */
  readonly alias: string;
  /** Of the `embedding` field (`dense_vector`, HNSW, cosine); every vector written or searched has them. */
  readonly dimensions: number;
  /** How long each request may take, in milliseconds (default 10,000). */
  readonly requestTimeoutMs?: number;
}

export interface ElasticsearchVectorIndex<P> extends VectorIndex<P> {
  /** The concrete index the alias points at. */
  currentIndex(): Promise<string>;
}

/**
 * What a document holds beside the listing: `embedding` (the indexed `dense_vector`) and `embeddingCopy` (the
 * same numbers in a field Elasticsearch never parses), read back for relevance feedback: whether `_source`
 * hands back a `dense_vector` depends on the cluster's version (9.2 leaves vectors out by default).
 */
type StoredVectorDocument<P> = StoredDocument<P> & {
  readonly embedding: number[];
  readonly embeddingCopy: { readonly values: number[] };
};

/** The index template: the text index's fields (unused here but for filters), the vector and its copy. */
export const vectorIndexTemplateBody = (
  dimensions: number,
): estypes.IndicesPutIndexTemplateIndexTemplateMapping => {
  const body = indexTemplateBody(dimensions);
  return {
    ...body,
    mappings: {
      ...body.mappings,
      properties: { ...body.mappings?.properties, embeddingCopy: { type: 'object', enabled: false } },
    },
  };
};

/**
 * The kNN request of a query: the `MAX_VECTOR_CANDIDATES` nearest documents (HNSW in the cluster, as many
 * candidates per shard) with no filter inside the kNN, and the filters as `post_filter` on those candidates, as
 * the specification's semantic search says; `size` of what passes.
 */
export const knnRequestOf = (
  index: string,
  vector: Float32Array,
  filters: VectorQuery['filters'],
  size: number,
): estypes.SearchRequest => ({
  index,
  knn: {
    field: 'embedding',
    query_vector: Array.from(vector),
    k: MAX_VECTOR_CANDIDATES,
    num_candidates: MAX_VECTOR_CANDIDATES,
  },
  post_filter: { bool: { filter: filterClauses(filters) } },
  size,
  version: true,
  _source: { excludes: ['embedding'] },
});

/** Elasticsearch scores cosine as (1 + cos) / 2. */
const cosineOf = (score: number): number => 2 * score - 1;
/** As the embedded adapter: orthogonal vectors are unrelated; float rounding leaves them a hair off zero. */
const RELATED_ABOVE = 1e-6;

/**
 * The VectorIndex on Elasticsearch: each public listing a document of its own index (`<alias>-<n>` behind
 * `alias`) with its embedding in a `dense_vector` field, written with `version_type: external` like the text
 * index (a stale version answers 409: `stale`), searched by kNN with the filters after the candidates.
 */
export const createElasticsearchVectorIndex = async <P>(
  options: ElasticsearchVectorIndexOptions,
): Promise<ElasticsearchVectorIndex<P>> => {
  if (!Number.isSafeInteger(options.dimensions) || options.dimensions < 1) {
    throw new RangeError(`invalid dimensions: ${options.dimensions}`);
  }
  const index = new EsVectorIndex<P>(options);
  await index.ensureExists(vectorIndexTemplateBody(options.dimensions));
  return index;
};

class EsVectorIndex<P> extends AliasedGenerations implements ElasticsearchVectorIndex<P> {
  constructor(private readonly options: ElasticsearchVectorIndexOptions) {
    super(options);
  }

  /**
   * A zero vector (a text without a known word) matches nothing, and a cosine field refuses it: its write is a
   * versioned delete, which records the version all the same.
   */
  async upsert(document: SearchDocument<P>, vector: Float32Array): Promise<WriteOutcome> {
    assertVersion(document.version);
    this.assertDimensions(vector);
    if (isZero(vector)) return this.versionedDelete(document.id, document.version);
    return this.versionedIndex(document.id, document.version, storedVectorOf(document, vector));
  }

  async upsertMany(entries: readonly VectorEntry<P>[]): Promise<WriteOutcome[]> {
    entries.forEach(({ document, vector }) => {
      assertVersion(document.version);
      this.assertDimensions(vector);
    });
    return this.bulk(
      entries.map(({ document, vector }) =>
        isZero(vector)
          ? { id: document.id, version: document.version }
          : { id: document.id, version: document.version, stored: storedVectorOf(document, vector) },
      ),
    );
  }

  async removeMany(removals: readonly VectorRemoval[]): Promise<WriteOutcome[]> {
    removals.forEach(({ version }) => assertVersion(version));
    return this.bulk(removals);
  }

  /**
   * One bulk request of versioned writes, in order: an index with `stored`, else a delete (a start-up load
   * removes every hidden listing: one request, one refresh wait). 409 is `stale`; a delete of nothing is
   * `applied` (its tombstone holds the version).
   */
  private async bulk(
    writes: readonly { id: string; version: number; stored?: StoredVectorDocument<P> }[],
  ): Promise<WriteOutcome[]> {
    if (writes.length === 0) return [];
    const { items } = await this.client.bulk(
      {
        refresh: 'wait_for',
        operations: writes.flatMap(
          ({ id, version, stored }): (estypes.BulkOperationContainer | StoredVectorDocument<P>)[] => {
            const target = { _index: this.alias, _id: id, version, version_type: 'external' as const };
            return stored === undefined ? [{ delete: target }] : [{ index: target }, stored];
          },
        ),
      },
      this.transport,
    );
    return items.map((item, position) => {
      const { status, error } = item.index ?? item.delete ?? {};
      if (status === 409) return 'stale';
      if (status === 404 && item.delete) return 'applied';
      if (error)
        throw new Error(`bulk write of ${writes[position]?.id} failed: ${error.reason ?? error.type}`);
      return 'applied';
    });
  }

  async remove(id: string, version: number): Promise<WriteOutcome> {
    return this.versionedDelete(id, version);
  }

  /**
   * With feedback, two kNN searches: the first gives the nearest `feedback.hits` passing the filters with their
   * vectors, the second searches the query moved towards them (the embedded adapter re-scores its candidates
   * instead; both rank by the moved query and answer its similarities).
   */
  async search({ vector, filters, limit, feedback }: VectorQuery): Promise<VectorHit<P>[]> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`invalid search limit: ${limit}`);
    this.assertDimensions(vector);
    if (isZero(vector)) return [];
    if (feedback === undefined || feedback.hits < 1) {
      return (await this.knn(vector, filters, limit)).map(({ vector: _vector, ...hit }) => hit);
    }
    const nearest = await this.knn(vector, filters, feedback.hits);
    if (nearest.length === 0) return [];
    const neighbours = nearest.map((hit) => {
      const neighbour = Float32Array.from(hit.vector);
      return { vector: neighbour, inverseNorm: 1 / (Math.hypot(...neighbour) || 1) };
    });
    return (await this.knn(movedTowards(vector, neighbours, feedback.weight), filters, limit)).map(
      ({ vector: _vector, ...hit }) => hit,
    );
  }

  private async knn(
    vector: Float32Array,
    filters: VectorQuery['filters'],
    size: number,
  ): Promise<(VectorHit<P> & { readonly vector: readonly number[] })[]> {
    const response = await this.client.search<StoredVectorDocument<P>>(
      knnRequestOf(this.alias, vector, filters, size),
      this.transport,
    );
    return response.hits.hits
      .map((hit) => {
        const { embeddingCopy, embedding: _embedding, ...stored } = hit._source!;
        return {
          id: hit._id!,
          similarity: Math.min(1, cosineOf(hit._score ?? 0)),
          document: { ...stored, version: hit._version! },
          vector: embeddingCopy.values,
        };
      })
      .filter((hit) => hit.similarity > RELATED_ABOVE)
      .sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  private assertDimensions(vector: Float32Array): void {
    if (vector.length !== this.options.dimensions) {
      throw new RangeError(`vector has ${vector.length} dimensions, the index ${this.options.dimensions}`);
    }
  }
}

const storedVectorOf = <P>(document: SearchDocument<P>, vector: Float32Array): StoredVectorDocument<P> => {
  const values = Array.from(vector);
  return { ...storedOf(document), embedding: values, embeddingCopy: { values } };
};

const isZero = (vector: Float32Array): boolean => vector.every((value) => value === 0);
