import type { StoredApiKey } from './identity.ports.js';

/** Keys kept at most; past it the oldest entry goes (a gateway sees far fewer distinct sellers and agents). */
const MAX_ENTRIES = 10_000;

/**
 * The active API keys a gateway has looked up, by prefix, so an authenticated request needs no database round
 * trip (docs/security.md, "API key revocation"). An entry lives `ttlMs` at most: the backstop when a revocation's
 * notification is lost. A revocation forgets its prefix; a lookup that was reading the table while a revocation
 * arrived is not cached (the `epoch` it started in has passed), so it cannot put a revoked key back.
 */
export class ActiveKeyCache {
  readonly #entries = new Map<string, { readonly key: StoredApiKey; readonly expiresAtMs: number }>();
  #epoch = 0;

  constructor(private readonly ttlMs: number) {
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1)
      throw new RangeError(`ttlMs must be a positive integer, got ${ttlMs}`);
  }

  /** Increases with every revocation seen; pass the value read before a lookup to `remember`. */
  get epoch(): number {
    return this.#epoch;
  }

  find(prefix: string, nowMs: number): StoredApiKey | undefined {
    const entry = this.#entries.get(prefix);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs > nowMs) return entry.key;
    this.#entries.delete(prefix);
    return undefined;
  }

  remember(prefix: string, key: StoredApiKey, nowMs: number, lookedUpInEpoch: number): void {
    if (lookedUpInEpoch !== this.#epoch) return;
    if (this.#entries.size >= MAX_ENTRIES && !this.#entries.has(prefix)) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(prefix, { key, expiresAtMs: nowMs + this.ttlMs });
  }

  forget(prefix: string): void {
    this.#epoch++;
    this.#entries.delete(prefix);
  }
}
