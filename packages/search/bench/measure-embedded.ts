import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { SEARCH_TEXT_LIMITS, createEmbeddedSearchIndex, createWorkerSearchIndex } from '../src/index.js';
import type { SearchIndex, SearchQuery } from '../src/index.js';
import { VOCABULARY, seededRandom, syntheticCatalog } from './synthetic-catalog.js';

/**
 * Measures the embedded index at catalog scale: build time, heap, the longest event-loop stall while
 * loading, query latency percentiles, and the worst queries we can think of, with the longest stall of this
 * thread's event loop during the queries. `worker` runs the same index in a worker thread (what the catalog
 * uses); `in-thread` on the caller's event loop.
 * Run: `node --expose-gc packages/search/dist/bench/measure-embedded.js [documents] [worker|in-thread]`.
 */
const SIZE = Number(process.argv[2] ?? 100_000);
const PLACEMENT = process.argv[3] ?? 'worker';
if (PLACEMENT !== 'worker' && PLACEMENT !== 'in-thread') throw new Error('placement: worker or in-thread');
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (value: number): string => `${value.toFixed(1)} ms`;

const timeQuery = async (
  index: SearchIndex<null>,
  query: SearchQuery,
): Promise<{ ms: number; total: number }> => {
  const start = performance.now();
  const { total } = await index.search(query);
  const elapsed = performance.now() - start;
  // Let the loop turn, so the event-loop delay histogram samples each query's stall separately.
  await nextTurn();
  return { ms: elapsed, total };
};

const main = async (): Promise<void> => {
  const documents = syntheticCatalog(SIZE);
  // Typed arrays keep their contents outside the heap: count both, after a full collection and a pause for V8's
  // sweeper, which frees dead array buffers after the collection.
  const memoryMb = async (): Promise<{ heap: number; arrayBuffers: number }> => {
    gc();
    await sleep(200);
    gc();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    return { heap: heapUsed / 2 ** 20, arrayBuffers: arrayBuffers / 2 ** 20 };
  };
  const before = await memoryMb();
  const worker = PLACEMENT === 'worker' ? createWorkerSearchIndex<null>() : undefined;
  const index: SearchIndex<null> = worker ?? createEmbeddedSearchIndex<null>();
  const stalls = monitorEventLoopDelay({ resolution: 1 });
  stalls.enable();
  const buildStart = performance.now();
  await index.upsertMany(documents);
  const buildMs = performance.now() - buildStart;
  stalls.disable();
  const after = await memoryMb();
  console.log(
    `${PLACEMENT}, documents ${SIZE}: build ${ms(buildMs)}, heap +${(after.heap - before.heap).toFixed(0)} MB, ` +
      `array buffers +${(after.arrayBuffers - before.arrayBuffers).toFixed(0)} MB (the documents existed before), ` +
      `longest event-loop stall while building ${ms(stalls.max / 1e6)}`,
  );

  const queryStalls = monitorEventLoopDelay({ resolution: 1 });
  queryStalls.enable();
  const random = seededRandom(7);
  const somewhatCommon = (): string => VOCABULARY[Math.floor(random() ** 3 * 2_000)]!;
  const latencies: number[] = [];
  for (let i = 0; i < 1_000; i++) {
    const text = `${somewhatCommon()} ${somewhatCommon()}`;
    const category = ['electronics', 'tools', 'toys'][i % 3];
    latencies.push(
      (await timeQuery(index, { text, filters: { visibility: 'public', category }, limit: 10, offset: 0 }))
        .ms,
    );
  }
  latencies.sort((a, b) => a - b);
  console.log(
    `1000 two-word queries with a category filter, top 10: p50 ${ms(percentile(latencies, 50))}, ` +
      `p99 ${ms(percentile(latencies, 99))}, max ${ms(latencies.at(-1)!)}`,
  );

  const worst: [string, SearchQuery][] = [
    [
      'the most common word, no filter',
      { text: VOCABULARY[0], filters: { visibility: 'any' }, limit: 10, offset: 0 },
    ],
    [
      'the two most common words',
      { text: `${VOCABULARY[0]} ${VOCABULARY[1]}`, filters: { visibility: 'any' }, limit: 10, offset: 0 },
    ],
    [
      'the most common word, last page',
      { text: VOCABULARY[0], filters: { visibility: 'any' }, limit: 100, offset: 50_000 },
    ],
    [
      'a model number by its parts',
      { text: 'wh 1000xm4', filters: { visibility: 'public' }, limit: 10, offset: 0 },
    ],
    ['no text, public, newest first', { filters: { visibility: 'public' }, limit: 20, offset: 0 }],
    [
      'no text, price filter, deep page',
      { filters: { visibility: 'public', minPriceCents: 20_000 }, limit: 100, offset: 60_000 },
    ],
    [
      'the 32 most common words (the word limit)',
      {
        text: VOCABULARY.slice(0, SEARCH_TEXT_LIMITS.maxWords).join(' '),
        filters: { visibility: 'any' },
        limit: 10,
        offset: 0,
      },
    ],
    [
      '32 rare words',
      {
        text: VOCABULARY.slice(4_000, 4_000 + SEARCH_TEXT_LIMITS.maxWords).join(' '),
        filters: { visibility: 'any' },
        limit: 10,
        offset: 0,
      },
    ],
  ];
  for (const [name, query] of worst) {
    await timeQuery(index, query);
    const runs = [];
    for (let i = 0; i < 5; i++) runs.push(await timeQuery(index, query));
    const slowest = Math.max(...runs.map((run) => run.ms));
    console.log(`${name}: ${ms(slowest)} (slowest of 5), total ${runs[0]!.total}`);
  }
  queryStalls.disable();
  console.log(`longest event-loop stall of this thread during all the queries: ${ms(queryStalls.max / 1e6)}`);
  await worker?.close();
};

await main();
