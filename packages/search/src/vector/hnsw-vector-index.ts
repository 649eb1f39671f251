import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Index, MetricKind, ScalarKind } from 'usearch';
import { matchesFilters } from '../embedded-search-index.js';
import { assertVersion } from '../search-input.js';
import type { SearchDocument, WriteOutcome } from '../search-index.port.js';
import type { VectorEntry, VectorHit, VectorIndex, VectorQuery } from './vector-index.port.js';

export interface HnswVectorIndexOptions {
  readonly dimensions: number;
  /**
   * HNSW graph parameters (usearch). The defaults were measured on 100-d vectors (README): connectivity 16 and
   * 40 candidates while adding build 100k vectors in seconds; 64 while searching keeps recall@10 above 0.99.
   */
  readonly connectivity?: number;
  readonly expansionAdd?: number;
  readonly expansionSearch?: number;
}

interface Entry<P> {
  readonly key: bigint;
  readonly document: SearchDocument<P>;
}

/** How many nearest candidates the first round fetches per hit asked for, before filters. */
const CANDIDATES_PER_HIT = 4;
const MIN_CANDIDATES = 64;
/** Each further round, while filters leave too few hits, fetches this many times more candidates. */
const CANDIDATE_GROWTH = 4;
/**
 * The candidate set never grows past this: the specification applies filters to the similarity candidates,
 * and a filter matching a handful of listings among 100k must not make a query walk the whole graph
 * (100k candidates cost ~0.3 s of blocked event loop). Such a query may return fewer than `limit` hits.
 */
export const MAX_VECTOR_CANDIDATES = 2_048;
/** Loads add vectors until this much time has passed, then yield to the event loop. */
const LOAD_SLICE_MS = 10;
const LOAD_BATCH = 64;

/** Creates the embedded vector index: an HNSW graph from usearch (a prebuilt native binary) in memory. */
export const createHnswVectorIndex = <P>(options: HnswVectorIndexOptions): VectorIndex<P> =>
  new HnswVectorIndex<P>(options);

class HnswVectorIndex<P> implements VectorIndex<P> {
  private graph: Index;
  private readonly entries = new Map<string, Entry<P>>();
  private readonly idOfKey = new Map<bigint, string>();
  private readonly removedVersions = new Map<string, number>();
  /** usearch keys are never reused: a replaced vector gets a new key, so a stale key can never name it. */
  private nextKey = 1n;

  constructor(private readonly options: HnswVectorIndexOptions) {
    if (!Number.isSafeInteger(options.dimensions) || options.dimensions < 1) {
      throw new RangeError(`invalid dimensions: ${options.dimensions}`);
    }
    this.graph = this.newGraph();
  }

  private newGraph(): Index {
    return new Index({
      dimensions: this.options.dimensions,
      metric: MetricKind.Cos,
      quantization: ScalarKind.F32,
      connectivity: this.options.connectivity ?? 16,
      expansion_add: this.options.expansionAdd ?? 40,
      expansion_search: this.options.expansionSearch ?? 64,
      multi: false,
    });
  }

  async upsert(document: SearchDocument<P>, vector: Float32Array): Promise<WriteOutcome> {
    return this.apply(document, vector);
  }

  async upsertMany(entries: readonly VectorEntry<P>[]): Promise<WriteOutcome[]> {
    const outcomes: WriteOutcome[] = [];
    let sliceStart = performance.now();
    for (let start = 0; start < entries.length; start += LOAD_BATCH) {
      for (const { document, vector } of entries.slice(start, start + LOAD_BATCH)) {
        outcomes.push(this.apply(document, vector));
      }
      if (performance.now() - sliceStart > LOAD_SLICE_MS) {
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

  async search({ vector, filters, limit }: VectorQuery): Promise<VectorHit<P>[]> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`invalid search limit: ${limit}`);
    this.assertDimensions(vector);
    const candidateBound = Math.min(this.entries.size, MAX_VECTOR_CANDIDATES);
    if (candidateBound === 0 || vector.every((value) => value === 0)) return [];
    let candidates = Math.min(candidateBound, Math.max(MIN_CANDIDATES, limit * CANDIDATES_PER_HIT));
    for (;;) {
      const hits = this.filteredNearest(vector, candidates, filters, limit);
      // Filters may leave fewer than `limit`: widen the candidate set, up to its bound.
      if (hits.length >= limit || candidates >= candidateBound) return hits;
      candidates = Math.min(candidateBound, candidates * CANDIDATE_GROWTH);
    }
  }

  async count(): Promise<number> {
    return this.entries.size;
  }

  async clear(): Promise<void> {
    this.entries.clear();
    this.idOfKey.clear();
    this.removedVersions.clear();
    this.graph = this.newGraph();
  }

  private filteredNearest(
    vector: Float32Array,
    candidates: number,
    filters: VectorQuery['filters'],
    limit: number,
  ): VectorHit<P>[] {
    const { keys, distances } = this.graph.search(vector, candidates, 0);
    const hits: VectorHit<P>[] = [];
    for (let i = 0; i < keys.length; i++) {
      const id = this.idOfKey.get(keys[i]!);
      const document = id === undefined ? undefined : this.entries.get(id)?.document;
      const similarity = Math.min(1, Math.max(0, 1 - distances[i]!));
      if (document === undefined || !(similarity > 0) || !matchesFilters(document, filters)) continue;
      hits.push({ id: document.id, similarity, document });
    }
    hits.sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return hits.slice(0, limit);
  }

  private apply(document: SearchDocument<P>, vector: Float32Array): WriteOutcome {
    assertVersion(document.version);
    this.assertDimensions(vector);
    if (this.isStale(document.id, document.version)) return 'stale';
    this.forget(document.id);
    this.removedVersions.delete(document.id);
    const key = this.nextKey++;
    this.graph.add(key, vector, 1);
    this.entries.set(document.id, { key, document });
    this.idOfKey.set(key, document.id);
    return 'applied';
  }

  private forget(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.graph.remove(entry.key);
    this.idOfKey.delete(entry.key);
    this.entries.delete(id);
  }

  private isStale(id: string, version: number): boolean {
    const known = this.entries.get(id)?.document.version ?? this.removedVersions.get(id);
    return known !== undefined && known >= version;
  }

  private assertDimensions(vector: Float32Array): void {
    if (vector.length !== this.options.dimensions) {
      throw new RangeError(`vector has ${vector.length} dimensions, the index ${this.options.dimensions}`);
    }
  }
}
