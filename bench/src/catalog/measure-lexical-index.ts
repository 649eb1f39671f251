import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type {
  SearchDocument,
  SearchIndex,
  SearchQuery,
  createEmbeddedSearchIndex,
} from '@marketplace/search';
import { summarize } from '../stats.js';
import type { Summary } from '../stats.js';
import { benchQueries, generateListings, searchDocumentOf } from './generated-listings.js';
import type { GeneratedListing } from './generated-listings.js';

/**
 * The embedded lexical index alone, on this thread, at catalog scale: build time and memory for 100,000
 * generated listings, then the latency of each of the 1,000 bench queries (public, page of 20, as the catalog
 * bench sends them), over three passes after a warm-up pass; then the latency of upserting every listing again
 * as a newer version, and whether the answers stayed the same. Several builds of `@marketplace/search` can be
 * measured in one run, one after the other (say before and after a change): pass each build's
 * `dist/src/index.js`; without arguments, this repository's. Later builds' answers are compared with the first's.
 * Run: `node --expose-gc bench/dist/src/catalog/measure-lexical-index.js [path/to/dist/src/index.js ...]`.
 */
const LISTINGS = 100_000;
const QUERIES = 1_000;
const MEASURED_PASSES = 3;
const PAGE = 20;

type SearchModule = { createEmbeddedSearchIndex: typeof createEmbeddedSearchIndex };
type BenchQuery = ReturnType<typeof benchQueries>[number];

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc, so memory is measured after a collection');

/** The shapes `benchQueries` draws from, so each can be read separately. */
const shapeOf = ({ q, category, condition }: BenchQuery): string => {
  if (q === undefined) return 'no text, category + condition';
  if (category !== undefined) return 'product + category';
  if (condition !== undefined) return 'brand + condition';
  return q.includes('-') ? 'model number' : 'brand + product';
};

const searchQueryOf = ({ q, category, condition }: BenchQuery): SearchQuery => ({
  text: q,
  filters: { visibility: 'public', category, condition },
  limit: PAGE,
  offset: 0,
});

/** After a full collection, and a pause for V8's sweeper, which frees dead array buffers after the collection. */
const memoryMb = async (): Promise<{ heap: number; arrayBuffers: number }> => {
  gc();
  await sleep(200);
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heap: heapUsed / 2 ** 20, arrayBuffers: arrayBuffers / 2 ** 20 };
};

/** What a query answered, to compare builds: the total and the page's ids in order. */
type Answer = { total: number; page: string };

const answersOf = async (
  index: SearchIndex<GeneratedListing>,
  queries: readonly BenchQuery[],
): Promise<Answer[]> => {
  const answers: Answer[] = [];
  for (const query of queries) {
    const { total, hits } = await index.search(searchQueryOf(query));
    answers.push({ total, page: hits.map((hit) => hit.id).join(' ') });
  }
  return answers;
};

const sameAnswers = (answers: readonly Answer[], reference: readonly Answer[]): number =>
  answers.filter((answer, i) => answer.total === reference[i]!.total && answer.page === reference[i]!.page)
    .length;

const measure = async (build: string, documents: readonly SearchDocument<GeneratedListing>[]) => {
  const module = (await import(
    build === 'default' ? '@marketplace/search' : pathToFileURL(resolve(build)).href
  )) as SearchModule;
  const before = await memoryMb();
  // Without yielding, as in the catalog's worker thread: the build time is the indexing itself.
  let index: SearchIndex<GeneratedListing> | undefined = module.createEmbeddedSearchIndex<GeneratedListing>({
    sliceMs: Number.POSITIVE_INFINITY,
  });
  const buildStart = performance.now();
  await index.upsertMany(documents);
  const buildMs = performance.now() - buildStart;
  const after = await memoryMb();

  const queries = benchQueries(QUERIES);
  const answers = await answersOf(index, queries);
  const latencies = new Map<string, number[]>([['all', []]]);
  for (let pass = 0; pass < MEASURED_PASSES; pass++) {
    for (const query of queries) {
      const start = performance.now();
      await index.search(searchQueryOf(query));
      const elapsed = performance.now() - start;
      const shape = shapeOf(query);
      if (!latencies.has(shape)) latencies.set(shape, []);
      latencies.get('all')!.push(elapsed);
      latencies.get(shape)!.push(elapsed);
    }
  }

  // Every listing again, one upsert each, as a newer version with the same content (a catalog-wide price
  // change would look like this): each replaces a document, and the answers must not change.
  const updateLatencies: number[] = [];
  for (const document of documents) {
    const start = performance.now();
    await index.upsert({ ...document, version: document.version + 1 });
    updateLatencies.push(performance.now() - start);
  }
  const unchangedAfterUpdates = sameAnswers(await answersOf(index, queries), answers);
  // MiniSearch (the index before this one) vacuumed replaced documents in the background, and clearing it
  // meanwhile threw: let that finish, which also keeps it out of the next build's figures.
  await sleep(5_000);
  await index.clear();
  index = undefined;
  const summaries: Record<string, Summary> = {};
  for (const [shape, samples] of latencies) summaries[shape] = summarize(samples);
  return {
    build,
    buildMs: Math.round(buildMs),
    heapMb: Math.round(after.heap - before.heap),
    arrayBuffersMb: Math.round(after.arrayBuffers - before.arrayBuffers),
    queryMs: summaries,
    updateMs: summarize(updateLatencies),
    sameAnswersAfterUpdating: `${unchangedAfterUpdates}/${QUERIES}`,
    answers,
  };
};

const builds = process.argv.length > 2 ? process.argv.slice(2) : ['default'];
// Flat strings, as documents decoded from the catalog's table are: analysing the generator's concatenated strings
// would flatten them, and the memory that frees would be subtracted from the index's.
const documents = JSON.parse(
  JSON.stringify(generateListings(LISTINGS).map(searchDocumentOf)),
) as SearchDocument<GeneratedListing>[];
let reference: Answer[] | undefined;
for (const build of builds) {
  const { answers, ...figures } = await measure(build, documents);
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  if (reference === undefined) {
    reference = answers;
    continue;
  }
  const sameTotal = answers.filter((answer, i) => answer.total === reference![i]!.total).length;
  const samePage = answers.filter((answer, i) => answer.page === reference![i]!.page).length;
  const idSet = (answer: Answer): string => answer.page.split(' ').sort().join(' ');
  const sameIds = answers.filter((answer, i) => idSet(answer) === idSet(reference![i]!)).length;
  process.stdout.write(
    `answers compared with ${builds[0]}: same total ${sameTotal}/${QUERIES}, same page in the same order ` +
      `${samePage}/${QUERIES}, same page ids in any order ${sameIds}/${QUERIES}\n`,
  );
}
