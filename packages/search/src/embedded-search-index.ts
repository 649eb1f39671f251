import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import MiniSearch from 'minisearch';
import type { Query } from 'minisearch';
import { indexTerms, queryTerms } from './lexical-analysis.js';
import type { QueryTerm } from './lexical-analysis.js';
import { NewestFirstOrder, newestFirst } from './result-order.js';
import { assertVersion, assertWithinLimits } from './search-input.js';

// The vector index imports the version check from here; its home is search-input.ts.
export { assertVersion } from './search-input.js';
import type {
  SearchDocument,
  SearchFilters,
  SearchHit,
  SearchIndex,
  SearchQuery,
  SearchResult,
  WriteOutcome,
} from './search-index.port.js';

export interface EmbeddedSearchIndexOptions {
  /**
   * How long `upsertMany` may index before yielding to the event loop, in milliseconds: requests keep
   * flowing while 100k listings load.
   */
  readonly sliceMs?: number;
}

/** Title words weigh twice the description's: a listing named after the query beats one that mentions it. */
const FIELD_BOOSTS = { title: 2, description: 1 };
const TEXT_FIELDS = Object.keys(FIELD_BOOSTS);

/**
 * The SearchIndex in process: MiniSearch (BM25+) over title and description with our own analysis
 * (`lexical-analysis.ts`), documents in a Map, and a newest-first order for queries without text.
 * Filters run inside MiniSearch on the intersection of the query's terms, before the sort.
 */
export const createEmbeddedSearchIndex = <P = unknown>(
  options: EmbeddedSearchIndexOptions = {},
): SearchIndex<P> => new EmbeddedSearchIndex<P>(options.sliceMs ?? 10);

class EmbeddedSearchIndex<P> implements SearchIndex<P> {
  private readonly documents = new Map<string, SearchDocument<P>>();
  /** Versions of removed documents, so a late older upsert cannot resurrect them. */
  private readonly removedVersions = new Map<string, number>();
  private readonly recency = new NewestFirstOrder<SearchDocument<P>>();
  private readonly lexical = new MiniSearch<SearchDocument<P>>({
    fields: TEXT_FIELDS,
    idField: 'id',
    // Analysis happens in `tokenize` so one function defines the terms; MiniSearch's term step is a no-op.
    tokenize: indexTerms,
    processTerm: (term) => term,
    searchOptions: {
      combineWith: 'AND',
      boost: FIELD_BOOSTS,
      // Queries arrive already analysed, as a tree of terms (see `queryOf`).
      tokenize: (term) => [term],
      processTerm: (term) => term,
    },
  });

  constructor(private readonly sliceMs: number) {}

  async upsert(document: SearchDocument<P>): Promise<WriteOutcome> {
    return this.apply(document);
  }

  async upsertMany(documents: readonly SearchDocument<P>[]): Promise<WriteOutcome[]> {
    const outcomes: WriteOutcome[] = [];
    let sliceStart = performance.now();
    for (const document of documents) {
      outcomes.push(this.apply(document));
      if (performance.now() - sliceStart >= this.sliceMs) {
        await nextTurn();
        sliceStart = performance.now();
      }
    }
    return outcomes;
  }

  async remove(id: string, version: number): Promise<WriteOutcome> {
    assertVersion(version);
    if (this.isStale(id, version)) return 'stale';
    this.forget(id);
    this.removedVersions.set(id, version);
    return 'applied';
  }

  async search(query: SearchQuery): Promise<SearchResult<P>> {
    assertWithinLimits(query);
    const text = query.text?.trim() ?? '';
    return text === '' ? this.newest(query) : this.relevant(queryTerms(text), query);
  }

  async count(): Promise<number> {
    return this.documents.size;
  }

  async clear(): Promise<void> {
    this.lexical.removeAll();
    this.documents.clear();
    this.removedVersions.clear();
    this.recency.clear();
  }

  private apply(document: SearchDocument<P>): WriteOutcome {
    assertVersion(document.version);
    if (this.isStale(document.id, document.version)) return 'stale';
    this.forget(document.id);
    this.removedVersions.delete(document.id);
    this.lexical.add(document);
    this.documents.set(document.id, document);
    this.recency.insert(document);
    return 'applied';
  }

  private isStale(id: string, version: number): boolean {
    const known = this.documents.get(id)?.version ?? this.removedVersions.get(id);
    return known !== undefined && known >= version;
  }

  private forget(id: string): void {
    const existing = this.documents.get(id);
    if (!existing) return;
    // discard (not remove) needs no copy of the old text; MiniSearch vacuums the stale postings in the background.
    this.lexical.discard(id);
    this.recency.delete(existing);
    this.documents.delete(id);
  }

  /** The page of matches, best first; equal scores newest first, then by id. */
  private relevant(terms: readonly QueryTerm[], { filters, offset, limit }: SearchQuery): SearchResult<P> {
    // Text made only of function words or punctuation matches nothing, as with Elasticsearch's analysers.
    if (terms.length === 0) return { hits: [], total: 0 };
    // Filters run on the intersection, once per matching listing. (As a document boost of 0 they ran once per
    // posting of every query word, twice as slow at 100k: see the README.) Scores are the same either way.
    const results = this.lexical.search(queryOf(terms), {
      filter: (result) => matchesFilters(this.documents.get(result.id as string), filters),
    });
    // MiniSearch sorts by score alone. Ordering each run of equal scores up to the end of the page is enough,
    // and touches only the documents on or before the page, however many match.
    const end = Math.min(results.length, offset + limit);
    const ordered: SearchHit<P>[] = [];
    for (let runStart = 0; runStart < end;) {
      const score = results[runStart]!.score;
      let runEnd = runStart + 1;
      while (runEnd < results.length && results[runEnd]!.score === score) runEnd++;
      const run = results.slice(runStart, runEnd).map(({ id }) => this.documents.get(id as string)!);
      for (const document of run.sort(newestFirst)) ordered.push({ id: document.id, score, document });
      runStart = runEnd;
    }
    return { hits: ordered.slice(offset, end), total: results.length };
  }

  /** Without text: the page of filtered documents, newest first, counting all of them for the total. */
  private newest(query: SearchQuery): SearchResult<P> {
    const hits: SearchHit<P>[] = [];
    let total = 0;
    this.recency.scan((document) => {
      if (!matchesFilters(document, query.filters)) return;
      if (total >= query.offset && hits.length < query.limit) hits.push({ id: document.id, document });
      total++;
    });
    return { hits, total };
  }
}

/** All terms must match (AND); a compound term matches whole (`wh1000xm4`) or by all its parts (`wh`, `1000xm4`). */
const queryOf = (terms: readonly QueryTerm[]): Query => ({
  combineWith: 'AND',
  queries: terms.map(({ whole, parts }) =>
    parts.length === 0
      ? whole
      : { combineWith: 'OR', queries: [whole, { combineWith: 'AND', queries: [...parts] }] },
  ),
});

export const matchesFilters = (document: SearchDocument | undefined, filters: SearchFilters): boolean =>
  document !== undefined &&
  (filters.visibility === 'any' || document.public) &&
  (filters.category === undefined || document.category === filters.category) &&
  (filters.condition === undefined || document.condition === filters.condition) &&
  (filters.minPriceCents === undefined || document.priceCents >= filters.minPriceCents) &&
  (filters.maxPriceCents === undefined || document.priceCents <= filters.maxPriceCents) &&
  (filters.minDiscountPercent === undefined ||
    (document.discountPercent !== undefined && document.discountPercent >= filters.minDiscountPercent));
