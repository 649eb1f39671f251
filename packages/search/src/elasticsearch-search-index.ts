import { errors } from '@elastic/elasticsearch';
import type { Client } from '@elastic/elasticsearch';
import type { estypes } from '@elastic/elasticsearch';
import { assertVersion, assertWithinLimits } from './search-input.js';
import type {
  SearchDocument,
  SearchFilters,
  SearchIndex,
  SearchQuery,
  SearchResult,
  WriteOutcome,
} from './search-index.port.js';

export interface ElasticsearchSearchIndexOptions {
  readonly client: Client;
  /** The alias searches and writes go through; each generation is a concrete index `<alias>-<n>`. */
  readonly alias: string;
  /**
   * Dimensions of the listing embedding stored beside the text (`embedding`, a `dense_vector` indexed for
   * kNN with cosine similarity); absent: no vector field.
   */
  readonly embeddingDimensions?: number;
  /** How long each request may take, in milliseconds (default 10,000). */
  readonly requestTimeoutMs?: number;
}

export interface ElasticsearchSearchIndex<P> extends SearchIndex<P> {
  /** The concrete index the alias points at. */
  currentIndex(): Promise<string>;
}

/**
 * Deep pages are allowed up to this offset + limit: Elasticsearch refuses `from + size` beyond the index's
 * `max_result_window` (10,000 by default); 100,000 covers the catalog's scale at a bounded cost per page.
 */
export const MAX_RESULT_WINDOW = 100_000;

/** The same 23 function words `lexical-analysis.ts` drops, so both adapters match the same queries. */
const STOP_WORDS = 'a an and are as at be by for from in into is it its of on or that the this to with'.split(
  ' ',
);

/**
 * The index template's settings and mappings. Text analysis reproduces `lexical-analysis.ts` as closely as
 * Elasticsearch's filters allow: whitespace tokens; `word_delimiter_graph` keeps a compound (`WH-1000XM4`) whole
 * without joiners (`catenate_all`) and as its parts, on both sides (flattened at index time, a graph at query
 * time so `match` accepts the whole or all the parts); possessives dropped; case and accents folded; the same
 * function words dropped; plurals reduced by the `minimal_english` stemmer (where `pluralize` differs on
 * irregular plurals, the two adapters may rank or match differently; the contract suite pins what must agree).
 */
export const indexTemplateBody = (
  embeddingDimensions?: number,
): estypes.IndicesPutIndexTemplateIndexTemplateMapping => ({
  settings: {
    'index.max_result_window': MAX_RESULT_WINDOW,
    analysis: {
      filter: {
        compound_parts: {
          type: 'word_delimiter_graph',
          catenate_all: true,
          preserve_original: false,
          split_on_case_change: false,
          split_on_numerics: false,
          stem_english_possessive: true,
        },
        function_words: { type: 'stop', stopwords: STOP_WORDS },
        singular: { type: 'stemmer', language: 'minimal_english' },
      },
      analyzer: {
        listing_text: {
          type: 'custom',
          tokenizer: 'whitespace',
          filter: [
            'compound_parts',
            'flatten_graph',
            'lowercase',
            'asciifolding',
            'function_words',
            'singular',
          ],
        },
        listing_query: {
          type: 'custom',
          tokenizer: 'whitespace',
          filter: ['compound_parts', 'lowercase', 'asciifolding', 'function_words', 'singular'],
        },
      },
    },
  },
  mappings: {
    dynamic: 'strict',
    properties: {
      id: { type: 'keyword' },
      title: { type: 'text', analyzer: 'listing_text', search_analyzer: 'listing_query' },
      description: { type: 'text', analyzer: 'listing_text', search_analyzer: 'listing_query' },
      category: { type: 'keyword' },
      condition: { type: 'keyword' },
      priceCents: { type: 'long' },
      discountPercent: { type: 'integer' },
      public: { type: 'boolean' },
      createdAtMs: { type: 'long' },
      // Kept in _source and handed back, never searched.
      payload: { type: 'object', enabled: false },
      ...(embeddingDimensions === undefined
        ? {}
        : {
            embedding: {
              type: 'dense_vector',
              dims: embeddingDimensions,
              index: true,
              similarity: 'cosine',
            },
          }),
    },
  },
});

/** The filters of the port as a `bool.filter` list; a kNN search takes the same list as its `filter`. */
export const filterClauses = (filters: SearchFilters): estypes.QueryDslQueryContainer[] => [
  ...(filters.visibility === 'public' ? [{ term: { public: true } }] : []),
  ...(filters.category === undefined ? [] : [{ term: { category: filters.category } }]),
  ...(filters.condition === undefined ? [] : [{ term: { condition: filters.condition } }]),
  ...(filters.minPriceCents === undefined && filters.maxPriceCents === undefined
    ? []
    : [{ range: { priceCents: { gte: filters.minPriceCents, lte: filters.maxPriceCents } } }]),
  ...(filters.minDiscountPercent === undefined
    ? []
    : [{ range: { discountPercent: { gte: filters.minDiscountPercent } } }]),
];

/** The search request of a port query: AND over title (2×) and description, filters, deterministic order. */
export const searchRequestOf = (index: string, query: SearchQuery): estypes.SearchRequest => {
  const text = query.text?.trim() ?? '';
  const filter = filterClauses(query.filters);
  return {
    index,
    from: query.offset,
    size: query.limit,
    track_total_hits: true,
    query:
      text === ''
        ? { bool: { filter } }
        : {
            bool: {
              must: {
                multi_match: {
                  query: text,
                  fields: ['title^2', 'description'],
                  type: 'cross_fields',
                  operator: 'and',
                  zero_terms_query: 'none',
                },
              },
              filter,
            },
          },
    sort: [
      ...(text === '' ? [] : [{ _score: { order: 'desc' as const } }]),
      { createdAtMs: { order: 'desc' as const } },
      { id: { order: 'asc' as const } },
    ],
  };
};

export type StoredDocument<P> = Omit<SearchDocument<P>, 'version'>;

/**
 * The SearchIndex on Elasticsearch through `@elastic/elasticsearch`: versioned writes with
 * `version_type: external` (a write whose version is not above the stored one answers 409: `stale`, so a
 * redelivered or reordered event never overwrites a newer one; deletes leave tombstones for
 * `index.gc_deletes`, 60 s by default), `refresh: 'wait_for'` so a resolved write is searchable, and `clear()`
 * as an alias swap to a fresh index (a rebuild forgets every version, and searches never see a missing index).
 */
export const createElasticsearchSearchIndex = async <P>(
  options: ElasticsearchSearchIndexOptions,
): Promise<ElasticsearchSearchIndex<P>> => {
  const index = new ElasticsearchIndex<P>(options);
  await index.ensureExists();
  return index;
};

/**
 * An alias over generations `<alias>-<n>` of one index template: what both Elasticsearch adapters (text and
 * vectors) write and search through, and `clear()` as an atomic switch to a fresh generation.
 */
export class AliasedGenerations {
  protected readonly client: Client;
  protected readonly alias: string;
  protected readonly transport: { requestTimeout: number };

  constructor(options: { client: Client; alias: string; requestTimeoutMs?: number | undefined }) {
    this.client = options.client;
    this.alias = options.alias;
    this.transport = { requestTimeout: options.requestTimeoutMs ?? 10_000 };
  }

  /** Installs the template and, on first use, creates generation 1 behind the alias. */
  async ensureExists(template: estypes.IndicesPutIndexTemplateIndexTemplateMapping): Promise<void> {
    await this.client.indices.putIndexTemplate(
      { name: this.alias, index_patterns: [`${this.alias}-*`], template },
      this.transport,
    );
    if (await this.client.indices.existsAlias({ name: this.alias }, this.transport)) return;
    await this.client.indices.create(
      { index: `${this.alias}-1`, aliases: { [this.alias]: { is_write_index: true } } },
      this.transport,
    );
  }

  async currentIndex(): Promise<string> {
    const aliases = await this.client.indices.getAlias({ name: this.alias }, this.transport);
    const [current] = Object.keys(aliases);
    if (current === undefined) throw new Error(`alias ${this.alias} points at no index`);
    return current;
  }

  async count(): Promise<number> {
    return (await this.client.count({ index: this.alias }, this.transport)).count;
  }

  /** A new generation behind the alias in one atomic alias update, then the old index is deleted. */
  async clear(): Promise<void> {
    const previous = await this.currentIndex();
    const generation = Number(previous.slice(this.alias.length + 1)) + 1;
    const next = `${this.alias}-${generation}`;
    await this.client.indices.create({ index: next }, this.transport);
    await this.client.indices.updateAliases(
      {
        actions: [
          { remove: { index: previous, alias: this.alias } },
          { add: { index: next, alias: this.alias, is_write_index: true } },
        ],
      },
      this.transport,
    );
    await this.client.indices.delete({ index: previous }, this.transport);
  }

  /** A versioned write (`version_type: external`): a version not above the stored one is `stale`. */
  protected async versionedIndex(id: string, version: number, document: object): Promise<WriteOutcome> {
    try {
      await this.client.index(
        { index: this.alias, id, version, version_type: 'external', refresh: 'wait_for', document },
        this.transport,
      );
      return 'applied';
    } catch (error) {
      if (isConflict(error)) return 'stale';
      throw error;
    }
  }

  /** A versioned delete (`version_type: external`): it leaves a tombstone, so older writes are stale. */
  protected async versionedDelete(id: string, version: number): Promise<WriteOutcome> {
    assertVersion(version);
    try {
      await this.client.delete(
        { index: this.alias, id, version, version_type: 'external', refresh: 'wait_for' },
        this.transport,
      );
      return 'applied';
    } catch (error) {
      if (isConflict(error)) return 'stale';
      // Not found: nothing to remove, but the versioned delete left its tombstone, so older upserts are stale.
      if (error instanceof errors.ResponseError && error.statusCode === 404) return 'applied';
      throw error;
    }
  }
}

class ElasticsearchIndex<P> extends AliasedGenerations implements ElasticsearchSearchIndex<P> {
  constructor(private readonly options: ElasticsearchSearchIndexOptions) {
    super(options);
  }

  override async ensureExists(): Promise<void> {
    await super.ensureExists(indexTemplateBody(this.options.embeddingDimensions));
  }

  async upsert(document: SearchDocument<P>): Promise<WriteOutcome> {
    assertVersion(document.version);
    return this.versionedIndex(document.id, document.version, storedOf(document));
  }

  async upsertMany(documents: readonly SearchDocument<P>[]): Promise<WriteOutcome[]> {
    if (documents.length === 0) return [];
    documents.forEach((document) => assertVersion(document.version));
    const { items } = await this.client.bulk(
      {
        refresh: 'wait_for',
        operations: documents.flatMap((document) => [
          {
            index: {
              _index: this.alias,
              _id: document.id,
              version: document.version,
              version_type: 'external',
            },
          },
          storedOf(document),
        ]),
      },
      this.transport,
    );
    return items.map((item, position) => {
      const { status, error } = item.index ?? {};
      if (status === 409) return 'stale';
      if (error)
        throw new Error(`bulk indexing of ${documents[position]?.id} failed: ${error.reason ?? error.type}`);
      return 'applied';
    });
  }

  async remove(id: string, version: number): Promise<WriteOutcome> {
    return this.versionedDelete(id, version);
  }

  async search(query: SearchQuery): Promise<SearchResult<P>> {
    assertWithinLimits(query);
    if (query.offset + query.limit > MAX_RESULT_WINDOW) {
      throw new RangeError(`offset + limit must be at most ${MAX_RESULT_WINDOW} on Elasticsearch`);
    }
    const text = query.text?.trim() ?? '';
    const response = await this.client.search<StoredDocument<P>>(
      { ...searchRequestOf(this.alias, query), version: true },
      this.transport,
    );
    const total = response.hits.total;
    return {
      total: typeof total === 'number' ? total : (total?.value ?? 0),
      hits: response.hits.hits.map((hit) => ({
        id: hit._id!,
        ...(text === '' || typeof hit._score !== 'number' ? {} : { score: hit._score }),
        document: { ...hit._source!, version: hit._version! },
      })),
    };
  }
}

export const storedOf = <P>({ version: _version, ...stored }: SearchDocument<P>): StoredDocument<P> => stored;

export const isConflict = (error: unknown): boolean =>
  error instanceof errors.ResponseError && error.statusCode === 409;
