import type { CatalogProduct } from '../domain/catalog-product.js';

interface Wait {
  readonly sellerAccountId: number;
  readonly minVersion: number;
  readonly done: (applied: boolean) => void;
}

const satisfies = (product: CatalogProduct, wait: Wait): boolean =>
  product.sellerAccountId === wait.sellerAccountId && product.version >= wait.minVersion;

/**
 * The AwaitProductVersion calls in progress on this replica, answered as it learns of rows of the products table:
 * its projection's commits and its change feed's reads of the other replicas' (docs/imports.md, "Pacing"). A
 * writer following its writes into the read side waits here on one call instead of asking GetProduct again and
 * again, each time a gRPC call and two reads on the read side's own threads.
 */
export class ProductVersionWaits {
  readonly #waits = new Map<string, Set<Wait>>();

  /** Rows now in the table (committed): answers the waits they satisfy. */
  seen(products: readonly CatalogProduct[]): void {
    if (this.#waits.size === 0) return;
    for (const product of products) {
      for (const wait of this.#waits.get(product.id) ?? []) if (satisfies(product, wait)) wait.done(true);
    }
  }

  /**
   * True once the seller's product is at `minVersion` or later, false when `timeoutMs` passes or `signal` aborts
   * first. `current` reads the row as it is: the wait is registered before it, so a commit in between is not
   * missed.
   */
  async wait(
    request: { readonly productId: string; readonly sellerAccountId: number; readonly minVersion: number },
    timeoutMs: number,
    signal: AbortSignal,
    current: () => Promise<CatalogProduct | undefined>,
  ): Promise<boolean> {
    const { promise, resolve, reject } = Promise.withResolvers<boolean>();
    const wait: Wait = { ...request, done: resolve };
    const waits = this.#waits.get(request.productId) ?? new Set<Wait>();
    this.#waits.set(request.productId, waits.add(wait));
    const timer = setTimeout(() => resolve(false), timeoutMs);
    const aborted = (): void => resolve(false);
    signal.addEventListener('abort', aborted, { once: true });
    if (signal.aborted) resolve(false);
    current().then((product) => {
      if (product !== undefined && satisfies(product, wait)) resolve(true);
    }, reject);
    try {
      return await promise;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', aborted);
      waits.delete(wait);
      if (waits.size === 0) this.#waits.delete(request.productId);
    }
  }
}
