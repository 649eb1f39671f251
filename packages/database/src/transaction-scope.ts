import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Knows whether the caller is inside one of this database's transactions, so that a query on the database
 * handle there fails clearly instead of deadlocking PGlite's single session (and behaves the same on pg), and
 * keeps the callbacks to run once that transaction committed (`Database.afterCommit`).
 */
export interface TransactionScope {
  /** Runs a transaction's work; `committed` runs its after-commit callbacks, for the adapter to call after COMMIT. */
  run<T>(work: () => Promise<T>): Promise<{ result: T; committed: () => void }>;
  assertOutside(operation: string): void;
  /** Queues `callback` until the caller's transaction commits; outside a transaction, runs it at once. */
  afterCommit(callback: () => void): void;
}

/** A callback is a hint (a wake-up): one that throws must not fail a transaction that has committed. */
const runAll = (callbacks: readonly (() => void)[]): void => {
  for (const callback of callbacks) {
    try {
      callback();
    } catch {
      // Ignored: see runAll.
    }
  }
};

export const createTransactionScope = (): TransactionScope => {
  const current = new AsyncLocalStorage<{ open: boolean; afterCommit: (() => void)[] }>();
  return {
    async run(work) {
      // Work started inside the transaction may outlive it; `open` tells it the transaction is over.
      const scope = { open: true, afterCommit: [] as (() => void)[] };
      try {
        const result = await current.run(scope, work);
        return { result, committed: () => runAll(scope.afterCommit) };
      } finally {
        scope.open = false;
      }
    },
    assertOutside(operation) {
      if (current.getStore()?.open) {
        throw new Error(
          `${operation} on the database handle inside a transaction: use the transaction handle`,
        );
      }
    },
    afterCommit(callback) {
      const scope = current.getStore();
      if (scope?.open) scope.afterCommit.push(callback);
      else runAll([callback]);
    },
  };
};
