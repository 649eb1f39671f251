import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Knows whether the caller is inside one of this database's transactions, so that a query on the database
 * handle there fails clearly instead of deadlocking PGlite's single session (and behaves the same on pg).
 */
export interface TransactionScope {
  run<T>(work: () => Promise<T>): Promise<T>;
  assertOutside(operation: string): void;
}

export const createTransactionScope = (): TransactionScope => {
  const current = new AsyncLocalStorage<{ open: boolean }>();
  return {
    async run(work) {
      // Work started inside the transaction may outlive it; `open` tells it the transaction is over.
      const scope = { open: true };
      try {
        return await current.run(scope, work);
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
  };
};
