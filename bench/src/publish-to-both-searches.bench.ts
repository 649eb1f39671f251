import { setTimeout as delay } from 'node:timers/promises';
import { BACKEND_SERVICES, type Cluster } from '@marketplace/e2e';
import { createNatsEventLog } from '@marketplace/eventlog';
import { namespacedEventLog } from '@marketplace/runtime';
import { generateListings } from './catalog/generated-listings.js';
import type { GeneratedListing } from './catalog/generated-listings.js';
import { httpClient, openLoop } from './catalog/load.js';
import { publishListingCreated } from './listing-created.js';
import type { HttpAnswer, HttpRequest } from './catalog/load.js';
import { clusterCpuTargets, meterCpu } from './process-cpu.js';
import { uniqueWord, withClusterSeller } from './publish-visibility.js';
import type { PollOptions } from './publish-visibility.js';
import { summarize } from './stats.js';

export interface PublishToBothSearchesOptions {
  /** Publications offered per second, whatever the answers (an open loop). */
  readonly ratePerSecond: number;
  readonly durationMs: number;
  /** Pause between two searches for one pending listing, per kind of search. */
  readonly pollIntervalMs: number;
  /**
   * Searches in flight at once over all pending listings (the poller's connections; more wait their turn): the
   * poller must not become the load. A listing is then searched for less often than every `pollIntervalMs`.
   */
  readonly maxConcurrentPolls: number;
  /** Publications in flight at once (connections to the gateway); a late one still counts from when it was due. */
  readonly maxConcurrentPublishes: number;
  /**
   * Follow every n-th listing only (1: all). Each followed listing costs two searches every `pollIntervalMs`
   * until it shows, and a semantic search costs the catalog what several listings' projection does: following
   * all of them at 100 listings/s makes the searches, not the listings, the load.
   */
  readonly followEvery: number;
}

/** A listing not in both searches by then is counted as never visible, not timed. */
const VISIBLE_WITHIN_MS = 30_000;
/** Semantic visibility: among the first matches of its own title, narrowed by its category and condition. */
const SEMANTIC_TOP = 10;
const JSON_HEADERS = { 'content-type': 'application/json' } as const;

interface Visibility {
  readonly lexicalMs: number | undefined;
  readonly semanticMs: number | undefined;
}

interface ProductMatches {
  readonly products: readonly { readonly id: string }[];
}

/**
 * The searches that follow listings until they show: at most `workers` searches in flight, each worker taking the
 * check that has waited longest (a check: one kind of search for one listing), so no search queues for a
 * connection and the searches' latency is the server's. A check is searched again no sooner than `intervalMs`
 * after its last answer; with many pending, a listing's figure is late by at most one round of the queue. A
 * failed search is a miss, counted.
 */
const visibilityChecks = (baseUrl: string, workers: number, poll: PollOptions) => {
  interface Check {
    readonly request: HttpRequest;
    readonly id: string;
    readonly since: number;
    readonly due: number;
    readonly settle: (ms: number | undefined) => void;
  }
  const exchange = httpClient(baseUrl, workers);
  const counts = { polls: 0, errors: 0 };
  const latenciesMs: number[] = [];
  const queue: Check[] = [];
  let stopped = false;

  const holds = async ({ request, id }: Check): Promise<boolean> => {
    counts.polls++;
    const sent = performance.now();
    let answer: HttpAnswer;
    try {
      answer = await exchange(request);
    } catch {
      counts.errors++;
      return false;
    } finally {
      latenciesMs.push(performance.now() - sent);
    }
    if (answer.status !== 200) {
      counts.errors++;
      return false;
    }
    return (JSON.parse(answer.text()) as ProductMatches).products.some((product) => product.id === id);
  };
  const work = async (): Promise<void> => {
    while (!stopped) {
      const check = queue.shift();
      if (check === undefined) {
        await delay(2);
        continue;
      }
      const wait = check.due - performance.now();
      if (wait > 0) await delay(wait);
      const found = await holds(check);
      const now = performance.now();
      if (found) check.settle(now - check.since);
      else if (now - check.since > poll.timeoutMs) check.settle(undefined);
      else queue.push({ ...check, due: now + poll.intervalMs });
    }
  };
  const workersDone = Promise.all(Array.from({ length: workers }, work));
  return {
    /** Milliseconds from `since` to the answer that held `id`, or undefined if none did within the timeout. */
    follow: (request: HttpRequest, id: string, since: number): Promise<number | undefined> =>
      new Promise((settle) => queue.push({ request, id, since, due: since, settle })),
    stop: async (): Promise<void> => {
      stopped = true;
      await workersDone;
    },
    counts,
    latenciesMs,
  };
};

/** The listing as a seller's system posts it, titled with its unique word. */
const listingBody = (listing: GeneratedListing, title: string, imageUrl: string): string =>
  JSON.stringify({
    name: title,
    description: listing.description,
    category: listing.category,
    condition: listing.condition,
    price: listing.priceCents / 100,
    quantity: listing.quantity,
    brand: listing.brand,
    imageUrl,
    promotePublicly: true,
  });

/** Time from its creation to the listing being returned by each search, checked independently. */
const trackVisibility = async (
  follow: ReturnType<typeof visibilityChecks>['follow'],
  listing: { readonly id: string; readonly word: string; readonly title: string } & Pick<
    GeneratedListing,
    'category' | 'condition'
  >,
  createdAt: number,
): Promise<Visibility> => {
  const lexical = { path: `/api/ucp/catalog/products?q=${listing.word}&limit=1` };
  const semantic: HttpRequest = {
    method: 'POST',
    path: '/api/ucp/catalog/search',
    headers: JSON_HEADERS,
    body: JSON.stringify({
      query: listing.title,
      category: listing.category,
      condition: listing.condition,
      limit: SEMANTIC_TOP,
    }),
  };
  const [lexicalMs, semanticMs] = await Promise.all([
    follow(lexical, listing.id, createdAt),
    follow(semantic, listing.id, createdAt),
  ]);
  return { lexicalMs, semanticMs };
};

const summaryOf = (samples: readonly number[]) => (samples.length > 0 ? summarize(samples) : undefined);

/**
 * Creates one listing titled `title`: resolves with its id and the moment it was created (its 201, or its event's
 * publication), from which visibility counts; rejects if it was not created.
 */
type CreateListing = (
  listing: GeneratedListing,
  title: string,
) => Promise<{ readonly id: string; readonly createdAt: number }>;

/** Through the gateway, as a seller's system publishes: `POST /api/products`. */
const createThroughApi = (cluster: Cluster, sellerKey: string, sockets: number): CreateListing => {
  const publish = httpClient(cluster.client.baseUrl, sockets, 30_000);
  const imageUrl = cluster.images.imageUrl('bench-lot');
  return async (listing, title) => {
    const answer = await publish({
      method: 'POST',
      path: '/api/products',
      headers: { ...JSON_HEADERS, 'x-mcp-api-key': sellerKey },
      body: listingBody(listing, title, imageUrl),
    });
    if (answer.status !== 201) throw new Error(`publish answered ${answer.status}`);
    return { id: (JSON.parse(answer.text()) as { id: string }).id, createdAt: performance.now() };
  };
};

/**
 * Straight onto the event log: `ListingCreated` on `marketplace.listing.v1`, as the listing service's relay
 * publishes it after the commit (the seller is a real account, so the catalog knows it). What the catalog and
 * the other consumers do with a listing, at a rate the listing service itself cannot create at on this machine.
 */
const createOnEventLog = async (
  cluster: Cluster,
  sellerAccountId: number,
): Promise<{ create: CreateListing; close(): Promise<void> }> => {
  const log = namespacedEventLog(
    await createNatsEventLog({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' }),
    cluster.namespace,
  );
  let productNumber = 0;
  const create: CreateListing = async (listing, title) => {
    // Far above the listing service's own numbers, so no id is shared with a listing it created.
    const productId = `product_${900_000_000 + ++productNumber}`;
    await publishListingCreated(log, { ...listing, productId, sellerAccountId, name: title });
    return { id: productId, createdAt: performance.now() };
  };
  return { create, close: () => log.close() };
};

/** Creates listings at the offered rate and follows each until both searches return it. */
const measure = async (cluster: Cluster, create: CreateListing, options: PublishToBothSearchesOptions) => {
  const offered = Math.floor((options.ratePerSecond * options.durationMs) / 1000);
  const listings = generateListings(offered);
  const searches = visibilityChecks(cluster.client.baseUrl, options.maxConcurrentPolls, {
    intervalMs: options.pollIntervalMs,
    timeoutMs: VISIBLE_WITHIN_MS,
  });
  const tracked: Promise<Visibility>[] = [];

  const meter = await meterCpu(clusterCpuTargets(cluster));
  const started = performance.now();
  const publishing = await openLoop(
    async (n) => {
      const listing = listings[n]!;
      const word = uniqueWord();
      const title = `${listing.title} ${word}`;
      const { id, createdAt } = await create(listing, title);
      if (n % options.followEvery === 0) {
        tracked.push(trackVisibility(searches.follow, { ...listing, id, word, title }, createdAt));
      }
    },
    options.ratePerSecond,
    options.durationMs,
  );
  const visibility = await Promise.all(tracked);
  await searches.stop();
  const seconds = (performance.now() - started) / 1000;
  const cpu = await meter.stop(publishing.requests);

  const lexical = visibility.flatMap(({ lexicalMs }) => (lexicalMs === undefined ? [] : [lexicalMs]));
  const semantic = visibility.flatMap(({ semanticMs }) => (semanticMs === undefined ? [] : [semanticMs]));
  const both = visibility.flatMap(({ lexicalMs, semanticMs }) =>
    lexicalMs === undefined || semanticMs === undefined ? [] : [Math.max(lexicalMs, semanticMs)],
  );
  return {
    ...options,
    offered,
    published: publishing.requests,
    followed: visibility.length,
    publishFailures: publishing.errors,
    // 201s per second from the first due time until the last publication answered.
    achievedRatePerSecond: publishing.perSecond,
    publishLatencyFromDueMs: summaryOf(publishing.latenciesMs),
    lexicalVisibleMs: summaryOf(lexical),
    semanticVisibleMs: summaryOf(semantic),
    bothVisibleMs: summaryOf(both),
    notVisibleWithinMs: {
      within: VISIBLE_WITHIN_MS,
      lexical: visibility.length - lexical.length,
      semantic: visibility.length - semantic.length,
    },
    searches: {
      ...searches.counts,
      perSecond: Math.round(searches.counts.polls / seconds),
      latencyMs: summaryOf(searches.latenciesMs),
    },
    cpu,
  };
};

/**
 * Listing created → visible in both searches, in cluster mode (every service its own process, PostgreSQL and
 * NATS, the catalog with its default local embedder): listings created at a fixed rate, each titled with a unique
 * word, either through the gateway (`api`) or as `ListingCreated` events on the log (`event log`); for each, the
 * time from its creation to being returned by lexical search (GET /api/ucp/catalog/products?q=<word>) and by
 * semantic search (POST /api/ucp/catalog/search with its title, its category and condition as filters, among the
 * first 10), polled with a bounded number of searches in flight.
 */
export const publishToBothSearchesCluster = (
  options: PublishToBothSearchesOptions,
  via: 'api' | 'event log' | 'event log, catalog alone' = 'api',
) =>
  withClusterSeller(async (cluster, seller) => {
    if (via === 'api') {
      return measure(
        cluster,
        createThroughApi(cluster, seller.apiKey, options.maxConcurrentPublishes),
        options,
      );
    }
    // The catalog and the gateway alone on the machine's cores, as when each service has its own: the other
    // consumers of listing events (and the listing service) stopped.
    if (via === 'event log, catalog alone') {
      for (const service of BACKEND_SERVICES)
        if (service !== 'catalog') await cluster.process(service).stop();
    }
    const onLog = await createOnEventLog(cluster, seller.accountId);
    try {
      return { via, ...(await measure(cluster, onLog.create, options)) };
    } finally {
      await onLog.close();
    }
  });
