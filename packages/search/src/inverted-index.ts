import { indexTerms } from './lexical-analysis.js';
import type { QueryTerm } from './lexical-analysis.js';
import { newestFirst } from './result-order.js';
import type { Orderable } from './result-order.js';

/** A text field of the documents, and how much a match in it weighs against the other fields. */
export interface WeightedField<D> {
  readonly text: (document: D) => string;
  readonly boost: number;
}

export interface ScoredDocument<D> {
  readonly document: D;
  readonly score: number;
}

// BM25+ as MiniSearch had it (k1 1.2, b 0.7, and the lower bound δ 0.5 a matching field always adds).
const K1 = 1.2;
const B = 0.7;
const DELTA = 0.5;
// A term's frequency in a field is stored in 16 bits; a field repeating a word more often counts as this.
const MAX_FREQUENCY = 0xffff;

/**
 * An inverted index over the text fields of documents, answering AND queries with BM25+ relevance.
 *
 * Each document gets an ordinal when added, and every term's postings list the ordinals holding it in
 * ascending order, in typed arrays (an ordinal, then its frequency in each field), so 100k listings of ~40 terms
 * stay compact. A query walks its rarest term's postings and checks the others by galloping forward, so its cost
 * follows the rarest term, not the most common. Only documents in the intersection that pass the caller's
 * filter are scored, and only the best `offset + limit` are kept (in a heap), of which only the page is ordered.
 *
 * Replacing or deleting a document leaves a tombstone: its old postings stay until a term's postings are more
 * than half dead (then that term's list is compacted), and its old ordinal until tombstones outnumber live
 * documents (then every ordinal is renumbered). Both cost in proportion to the dead entries they drop, so an
 * update costs the terms of the document, amortised. Deleting re-analyses the old document's text to find its
 * terms rather than keeping a list of them per document.
 */
export class InvertedIndex<D extends Orderable> {
  private readonly fieldCount: number;
  private readonly dictionary = new Map<string, Postings>();
  /** By ordinal; undefined once replaced or deleted. */
  private documents: (D | undefined)[] = [];
  private readonly ordinalOf = new Map<string, number>();
  /** Each field's length per document (ordinal × field), for BM25's length normalisation. */
  private fieldLengths = new Int32Array(0);
  /**
   * Each document's `createdAtMs` by ordinal. Equal scores are frequent and break on it: reading it from here
   * spares the two documents, scattered in memory, that each comparison would otherwise read.
   */
  private createdAt = new Float64Array(0);
  /** Sum over live documents of each field's length, for the average length. */
  private readonly totalFieldLengths: number[];

  constructor(private readonly fields: readonly WeightedField<D>[]) {
    this.fieldCount = fields.length;
    this.totalFieldLengths = fields.map(() => 0);
  }

  get size(): number {
    return this.ordinalOf.size;
  }

  get(id: string): D | undefined {
    const ordinal = this.ordinalOf.get(id);
    return ordinal === undefined ? undefined : this.documents[ordinal];
  }

  /** Adds `document`, replacing the one with the same id. */
  set(document: D): void {
    this.delete(document.id);
    const ordinal = this.documents.length;
    this.documents.push(document);
    this.ordinalOf.set(document.id, ordinal);
    const { lengths, frequencies } = this.analyse(document);
    this.createdAt = withCapacity(this.createdAt, ordinal + 1);
    this.createdAt[ordinal] = document.createdAtMs;
    this.fieldLengths = withCapacity(this.fieldLengths, (ordinal + 1) * this.fieldCount);
    lengths.forEach((length, field) => {
      this.fieldLengths[ordinal * this.fieldCount + field] = length;
      this.totalFieldLengths[field]! += length;
    });
    for (const [term, perField] of frequencies) {
      let postings = this.dictionary.get(term);
      if (!postings) this.dictionary.set(term, (postings = new Postings(this.fieldCount)));
      postings.append(ordinal, perField);
    }
  }

  delete(id: string): void {
    const ordinal = this.ordinalOf.get(id);
    if (ordinal === undefined) return;
    const document = this.documents[ordinal]!;
    this.documents[ordinal] = undefined;
    this.ordinalOf.delete(id);
    const { lengths, frequencies } = this.analyse(document);
    lengths.forEach((length, field) => (this.totalFieldLengths[field]! -= length));
    for (const [term, perField] of frequencies) {
      const postings = this.dictionary.get(term)!;
      postings.markDead(perField);
      if (postings.dead * 2 > postings.size) {
        postings.rewrite((held) => (this.documents[held] === undefined ? -1 : held));
        if (postings.size === 0) this.dictionary.delete(term);
      }
    }
    if (this.documents.length > 2 * this.ordinalOf.size) this.renumber();
  }

  clear(): void {
    this.dictionary.clear();
    this.documents = [];
    this.ordinalOf.clear();
    this.fieldLengths = new Int32Array(0);
    this.createdAt = new Float64Array(0);
    this.totalFieldLengths.fill(0);
  }

  /**
   * The documents matching every query term (a term matches whole or by all of its parts) that `accepts`
   * admits, ordered by descending score, then newest first, then by id: the page of `limit` from `offset`, and
   * how many there are in all.
   */
  search(
    terms: readonly QueryTerm[],
    accepts: (document: D) => boolean,
    { offset, limit }: { readonly offset: number; readonly limit: number },
  ): { page: ScoredDocument<D>[]; total: number } {
    const clauses: Clause[] = [];
    for (const term of terms) {
      const clause = this.clauseOf(term);
      if (!clause) return { page: [], total: 0 };
      clauses.push(clause);
    }
    clauses.sort((a, b) => estimatedMatches(a) - estimatedMatches(b));
    const [rarest, ...others] = clauses;
    if (!rarest) return { page: [], total: 0 };

    let candidates = this.liveMatchesOf(rarest);
    for (const clause of others) candidates = this.narrow(candidates, clause);

    const scorers = clauses.map((clause) => this.cursorOf(clause));
    const lengthNorms = new Float64Array(this.fieldCount);
    const averageLengths = this.totalFieldLengths.map((total) => total / this.size);
    const best = new BestMatches(Math.min(offset + limit, candidates.length), this.ranksBefore);
    let total = 0;
    for (const ordinal of candidates) {
      const document = this.documents[ordinal]!;
      if (!accepts(document)) continue;
      total++;
      for (let field = 0; field < this.fieldCount; field++) {
        const length = this.fieldLengths[ordinal * this.fieldCount + field]!;
        lengthNorms[field] = K1 * (1 - B + (B * length) / averageLengths[field]!);
      }
      let score = 0;
      for (const scorer of scorers) score += scorer.score(ordinal, lengthNorms);
      best.offer(ordinal, score);
    }
    const page = best
      .takeFrom(offset)
      .map(({ ordinal, score }) => ({ document: this.documents[ordinal]!, score }));
    return { page, total };
  }

  /** Higher score first; equal scores newest first, then by id (as `newestFirst` orders documents). */
  private readonly ranksBefore = (a: number, scoreOfA: number, b: number, scoreOfB: number): boolean => {
    if (scoreOfA !== scoreOfB) return scoreOfA > scoreOfB;
    const createdA = this.createdAt[a]!;
    const createdB = this.createdAt[b]!;
    if (createdA !== createdB) return createdA > createdB;
    return newestFirst(this.documents[a]!, this.documents[b]!) < 0;
  };

  /**
   * Each term's frequency in each field of the document, and each field's length. A field's length is its number
   * of distinct terms, as MiniSearch counted it: the ranking stayed the same as before (the same pages for all
   * 1,000 bench queries), where counting every occurrence changed about a quarter of them.
   */
  private analyse(document: D): { lengths: number[]; frequencies: Map<string, number[]> } {
    const frequencies = new Map<string, number[]>();
    const lengths = this.fields.map(() => 0);
    this.fields.forEach((field, fieldIndex) => {
      for (const term of indexTerms(field.text(document))) {
        let perField = frequencies.get(term);
        if (!perField) frequencies.set(term, (perField = this.fields.map(() => 0)));
        if (perField[fieldIndex] === 0) lengths[fieldIndex]!++;
        perField[fieldIndex] = perField[fieldIndex]! + 1;
      }
    });
    return { lengths, frequencies };
  }

  /** The query term's postings, or undefined when no document can match it. */
  private clauseOf({ whole, parts }: QueryTerm): Clause | undefined {
    const wholePostings = this.dictionary.get(whole);
    const partPostings = parts.map((part) => this.dictionary.get(part));
    const allParts =
      parts.length > 0 && partPostings.every((postings) => postings !== undefined)
        ? partPostings.sort((a, b) => a.liveSize - b.liveSize)
        : undefined;
    return wholePostings || allParts ? { whole: wholePostings, parts: allParts } : undefined;
  }

  /** The live ordinals matching the clause, ascending. */
  private liveMatchesOf({ whole, parts }: Clause): Int32Array {
    const wholeMatches = whole ? this.liveOrdinalsOf(whole) : new Int32Array(0);
    if (!parts) return wholeMatches;
    const [rarestPart, ...otherParts] = parts;
    let partMatches = this.liveOrdinalsOf(rarestPart!);
    for (const part of otherParts) partMatches = this.narrow(partMatches, { whole: part, parts: undefined });
    return union(wholeMatches, partMatches);
  }

  private liveOrdinalsOf(postings: Postings): Int32Array {
    const live = new Int32Array(postings.liveSize);
    let size = 0;
    for (let entry = 0; entry < postings.size; entry++) {
      const ordinal = postings.ordinalAt(entry);
      if (this.documents[ordinal] !== undefined) live[size++] = ordinal;
    }
    return live.subarray(0, size);
  }

  /** The candidates (ascending) that also match the clause. */
  private narrow(candidates: Int32Array, clause: Clause): Int32Array {
    const cursor = this.cursorOf(clause);
    let kept = 0;
    for (const ordinal of candidates) if (cursor.matches(ordinal)) candidates[kept++] = ordinal;
    return candidates.subarray(0, kept);
  }

  private cursorOf({ whole, parts }: Clause): ClauseCursor {
    return new ClauseCursor(
      whole && this.termCursorOf(whole),
      parts?.map((part) => this.termCursorOf(part)),
    );
  }

  /** A cursor over the term's postings, weighing each field by its boost and the term's rarity in it. */
  private termCursorOf(postings: Postings): TermCursor {
    const weights = new Float64Array(this.fieldCount);
    this.fields.forEach(({ boost }, field) => {
      const holding = postings.documentCounts[field]!;
      weights[field] = boost * Math.log(1 + (this.size - holding + 0.5) / (holding + 0.5));
    });
    return new TermCursor(postings, weights, this.fieldCount);
  }

  /** Gives live documents the ordinals 0..size-1 in their current order, dropping every dead posting. */
  private renumber(): void {
    const renumbered = new Int32Array(this.documents.length).fill(-1);
    const live: D[] = [];
    const lengths = new Int32Array(this.size * this.fieldCount);
    const createdAt = new Float64Array(this.size);
    this.documents.forEach((document, ordinal) => {
      if (!document) return;
      const newOrdinal = live.length;
      renumbered[ordinal] = newOrdinal;
      for (let field = 0; field < this.fieldCount; field++) {
        lengths[newOrdinal * this.fieldCount + field] = this.fieldLengths[ordinal * this.fieldCount + field]!;
      }
      createdAt[newOrdinal] = this.createdAt[ordinal]!;
      this.ordinalOf.set(document.id, newOrdinal);
      live.push(document);
    });
    for (const [term, postings] of this.dictionary) {
      postings.rewrite((ordinal) => renumbered[ordinal]!);
      if (postings.size === 0) this.dictionary.delete(term);
    }
    this.documents = live;
    this.fieldLengths = lengths;
    this.createdAt = createdAt;
  }
}

/**
 * The documents holding one term, by ascending ordinal, with the term's frequency in each field. One typed array
 * per term: most terms of a catalog (model numbers, SKUs) are in a handful of listings, so the per-term overhead
 * counts as much as the postings themselves.
 */
class Postings {
  /** Per entry: the ordinal, then the frequencies, two 16-bit fields to an element. */
  private entries: Int32Array;
  private readonly stride: number;
  size = 0;
  /** Entries whose document has since been replaced or deleted. */
  dead = 0;
  /** Live documents holding the term, per field: BM25's document frequency. */
  readonly documentCounts: number[];

  constructor(fieldCount: number) {
    this.stride = 1 + Math.ceil(fieldCount / 2);
    this.entries = new Int32Array(this.stride);
    this.documentCounts = new Array<number>(fieldCount).fill(0);
  }

  get liveSize(): number {
    return this.size - this.dead;
  }

  ordinalAt(entry: number): number {
    return this.entries[entry * this.stride]!;
  }

  frequencyAt(entry: number, field: number): number {
    return (this.entries[entry * this.stride + 1 + (field >> 1)]! >>> ((field & 1) * 16)) & 0xffff;
  }

  /** Adds the document with the highest ordinal yet, so the entries stay ascending. */
  append(ordinal: number, frequencies: readonly number[]): void {
    this.entries = withCapacity(this.entries, (this.size + 1) * this.stride);
    const first = this.size * this.stride;
    this.entries[first] = ordinal;
    frequencies.forEach((frequency, field) => {
      this.entries[first + 1 + (field >> 1)]! |= Math.min(frequency, MAX_FREQUENCY) << ((field & 1) * 16);
      if (frequency > 0) this.documentCounts[field]!++;
    });
    this.size++;
  }

  markDead(frequencies: readonly number[]): void {
    this.dead++;
    frequencies.forEach((frequency, field) => {
      if (frequency > 0) this.documentCounts[field]!--;
    });
  }

  /** Maps each entry's ordinal (keeping the order), dropping the entries mapped to -1: they were dead. */
  rewrite(newOrdinalOf: (ordinal: number) => number): void {
    let kept = 0;
    for (let entry = 0; entry < this.size; entry++) {
      const ordinal = newOrdinalOf(this.ordinalAt(entry));
      if (ordinal < 0) continue;
      const from = entry * this.stride;
      const to = kept * this.stride;
      this.entries[to] = ordinal;
      for (let slot = 1; slot < this.stride; slot++) this.entries[to + slot] = this.entries[from + slot]!;
      kept++;
    }
    // The slots past the end are reused by `append`, which ORs frequencies in: they must be zero.
    this.entries.fill(0, kept * this.stride, this.size * this.stride);
    this.size = kept;
    this.dead = 0;
  }
}

/** A query term as postings: its compound whole, and all of its parts (rarest first) when it has parts. */
interface Clause {
  readonly whole: Postings | undefined;
  readonly parts: readonly Postings[] | undefined;
}

/** At most this many documents match the clause: the whole's, plus those of its rarest part. */
const estimatedMatches = ({ whole, parts }: Clause): number =>
  (whole?.liveSize ?? 0) + (parts?.[0]?.liveSize ?? 0);

/** Walks a term's postings forward, for documents visited in ascending ordinal order. */
class TermCursor {
  private position = 0;

  constructor(
    private readonly postings: Postings,
    /** Per field: the field's boost times the term's inverse document frequency in it. */
    private readonly weights: Float64Array,
    private readonly fieldCount: number,
  ) {}

  /**
   * Moves to the first entry at or after `ordinal` and tells whether it is `ordinal`. Gallops (steps of 1, 2,
   * 4...) then bisects, so skipping far through a common term's postings costs the log of the distance.
   */
  seek(ordinal: number): boolean {
    const postings = this.postings;
    const size = postings.size;
    let low = this.position;
    if (low >= size || postings.ordinalAt(low) >= ordinal) {
      return low < size && postings.ordinalAt(low) === ordinal;
    }
    // Invariant: the entry at low is before `ordinal`; the one at high is not, or high === size.
    let step = 1;
    let high = low + step;
    while (high < size && postings.ordinalAt(high) < ordinal) {
      low = high;
      step *= 2;
      high = low + step;
    }
    high = Math.min(high, size);
    while (high - low > 1) {
      const middle = (low + high) >>> 1;
      if (postings.ordinalAt(middle) < ordinal) low = middle;
      else high = middle;
    }
    this.position = high;
    return high < size && postings.ordinalAt(high) === ordinal;
  }

  /** BM25+ of the entry the cursor is on, summed over the fields holding the term. */
  score(lengthNorms: Float64Array): number {
    let score = 0;
    for (let field = 0; field < this.fieldCount; field++) {
      const frequency = this.postings.frequencyAt(this.position, field);
      if (frequency > 0) {
        score += this.weights[field]! * (DELTA + (frequency * (K1 + 1)) / (frequency + lengthNorms[field]!));
      }
    }
    return score;
  }
}

/** Matches and scores one query term, for documents visited in ascending ordinal order. */
class ClauseCursor {
  constructor(
    private readonly whole: TermCursor | undefined,
    private readonly parts: readonly TermCursor[] | undefined,
  ) {}

  matches(ordinal: number): boolean {
    if (this.whole?.seek(ordinal)) return true;
    return this.parts !== undefined && this.parts.every((part) => part.seek(ordinal));
  }

  /** The whole's score plus, when every part is there too, the parts' (as MiniSearch's OR of the two did). */
  score(ordinal: number, lengthNorms: Float64Array): number {
    let score = this.whole?.seek(ordinal) ? this.whole.score(lengthNorms) : 0;
    if (this.parts?.every((part) => part.seek(ordinal))) {
      for (const part of this.parts) score += part.score(lengthNorms);
    }
    return score;
  }
}

/** The ascending union of two ascending ordinal lists. */
const union = (a: Int32Array, b: Int32Array): Int32Array => {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const merged = new Int32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let size = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    merged[size++] = Math.min(x, y);
    if (x <= y) i++;
    if (y <= x) j++;
  }
  merged.set(a.subarray(i), size);
  size += a.length - i;
  merged.set(b.subarray(j), size);
  size += b.length - j;
  return merged.subarray(0, size);
};

/** Whether the document of ordinal `a` with score `scoreOfA` ranks before `b` with `scoreOfB`. */
type RankOrder = (a: number, scoreOfA: number, b: number, scoreOfB: number) => boolean;

/**
 * The best `capacity` of the (ordinal, score) entries offered, in a binary heap whose root is the worst kept, so
 * an entry that does not make it costs one comparison.
 */
class BestMatches {
  private readonly ordinals: Int32Array;
  private readonly scores: Float64Array;
  private size = 0;

  constructor(
    capacity: number,
    private readonly ranksBefore: RankOrder,
  ) {
    this.ordinals = new Int32Array(capacity);
    this.scores = new Float64Array(capacity);
  }

  offer(ordinal: number, score: number): void {
    if (this.size < this.ordinals.length) this.siftUp(this.size++, ordinal, score);
    else if (this.ranksBefore(ordinal, score, this.ordinals[0]!, this.scores[0]!))
      this.siftDown(ordinal, score);
  }

  /**
   * The entries kept from rank `rank` (0 for the best) on, best first, emptying the heap. They are the worst kept,
   * so they come off the root one by one: a deep page never sorts the entries before it.
   */
  takeFrom(rank: number): { ordinal: number; score: number }[] {
    const worstFirst: { ordinal: number; score: number }[] = [];
    while (this.size > rank) {
      worstFirst.push({ ordinal: this.ordinals[0]!, score: this.scores[0]! });
      this.size--;
      if (this.size > 0) this.siftDown(this.ordinals[this.size]!, this.scores[this.size]!);
    }
    return worstFirst.reverse();
  }

  /** Places a new entry at `position`, then moves it up past the parents that rank before it. */
  private siftUp(position: number, ordinal: number, score: number): void {
    const { ordinals, scores } = this;
    while (position > 0) {
      const parent = (position - 1) >>> 1;
      if (!this.ranksBefore(ordinals[parent]!, scores[parent]!, ordinal, score)) break;
      ordinals[position] = ordinals[parent]!;
      scores[position] = scores[parent]!;
      position = parent;
    }
    ordinals[position] = ordinal;
    scores[position] = score;
  }

  /** Replaces the root (the worst kept) with the entry, then moves it down past the children that rank after it. */
  private siftDown(ordinal: number, score: number): void {
    const { ordinals, scores, size } = this;
    let position = 0;
    for (;;) {
      let child = 2 * position + 1;
      if (child >= size) break;
      const right = child + 1;
      if (
        right < size &&
        this.ranksBefore(ordinals[child]!, scores[child]!, ordinals[right]!, scores[right]!)
      ) {
        child = right;
      }
      if (!this.ranksBefore(ordinal, score, ordinals[child]!, scores[child]!)) break;
      ordinals[position] = ordinals[child]!;
      scores[position] = scores[child]!;
      position = child;
    }
    ordinals[position] = ordinal;
    scores[position] = score;
  }
}

/** The array itself when it holds `length` elements, else a copy at least twice as long. */
const withCapacity = <A extends Int32Array | Float64Array>(array: A, length: number): A => {
  if (length <= array.length) return array;
  const larger = new (array.constructor as new (length: number) => A)(Math.max(length, array.length * 2));
  larger.set(array);
  return larger;
};
