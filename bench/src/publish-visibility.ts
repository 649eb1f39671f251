import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Cluster } from '@marketplace/e2e';

/** What the publish → visible scenarios share: the cluster with a seller, unique words, the search poll. */

/** A fresh cluster (every service its own process, PostgreSQL and NATS) with one seller; stopped afterwards. */
export const withClusterSeller = async <T>(
  work: (cluster: Cluster, seller: { readonly accountId: number; readonly apiKey: string }) => Promise<T>,
): Promise<T> => {
  const cluster = await Cluster.start();
  try {
    const seller = await cluster.adminClient().createAccount('seller', 'Bench Seller');
    return await work(cluster, seller);
  } finally {
    await cluster.stop();
  }
};

/**
 * A word no dictionary and no other listing holds: 10 random letters. Letters only, so the lexical index keeps
 * it whole; random, so its character trigrams are its own too (the local embedder builds an unknown word's vector
 * from them: words of one run sharing a prefix would pull each other's listings up in semantic search).
 */
export const uniqueWord = (): string =>
  Array.from(randomBytes(10), (byte) => String.fromCharCode(97 + (byte % 26))).join('');

export interface PollOptions {
  /** Pause between the answer of one search and the next. */
  readonly intervalMs: number;
  /** Give up after this long since `since`. */
  readonly timeoutMs: number;
}

/**
 * Searches (`found`) until the listing is there: the milliseconds from `since` (its 201) to the answer that had
 * it, or undefined when it was not there within the timeout. The answer's own latency counts, so a figure is at
 * most one poll late.
 */
export const msUntilFound = async (
  found: () => Promise<boolean>,
  since: number,
  { intervalMs, timeoutMs }: PollOptions,
): Promise<number | undefined> => {
  for (;;) {
    if (await found()) return performance.now() - since;
    if (performance.now() - since > timeoutMs) return undefined;
    await delay(intervalMs);
  }
};
