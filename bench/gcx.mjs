// Lexical index alone in a worker at a fixed rate, for --trace-gc.
import { createWorkerSearchIndex } from '@marketplace/search';
import { benchQueries, generateListings, searchDocumentOf } from './dist/src/catalog/generated-listings.js';
import { openLoop } from './dist/src/catalog/load.js';
import { summarize } from './dist/src/stats.js';
const index = createWorkerSearchIndex(process.env.YOUNG ? { resourceLimits: { maxYoungGenerationSizeMb: Number(process.env.YOUNG) } } : {});
await index.upsertMany(generateListings(100_000).map(searchDocumentOf));
const queries = benchQueries(1000);
const send = async (n) => { const { q, category, condition } = queries[n % queries.length]; await index.search({ text: q, filters: { visibility: 'public', category, condition }, limit: 20, offset: 0 }); };
for (let n = 0; n < 500; n++) await send(n);
console.error('MEASURE START');
const r = await openLoop(send, Number(process.env.RATE ?? 700), 15000);
console.error('MEASURE END');
console.log(JSON.stringify(summarize(r.latenciesMs)));
await index.close();
