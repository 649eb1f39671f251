import { randomUUID } from 'node:crypto';
import type { Cluster } from '../src/harness/cluster.js';
import { MarketplaceClient } from '../src/harness/marketplace-client.js';
import type { ServiceName } from './topology.js';

/** The word every listing of a fault run carries, so search can be asked for all of them. */
export const RUN_WORD = 'quillhaven';

export interface LoadTally {
  /** HTTP requests sent, retries included. */
  readonly attempts: number;
  /**
   * Answers to those requests by HTTP status, `network` for requests that got no answer (the gateway was down
   * or the connection dropped) and `timeout` for none within the client's 10 s, retried ones included.
   */
  readonly outcomes: Record<string, number>;
  /** The same, by kind of write (publish, account, quote, order). */
  readonly byWrite: Record<string, Record<string, number>>;
  /** Logical operations that ended in this stretch (one or more attempts each, with one idempotency key). */
  readonly operations: number;
  /** The answer each operation ended with: its last attempt's outcome. */
  readonly finalOutcomes: Record<string, number>;
  /** The same, by kind of write. */
  readonly finalByWrite: Record<string, Record<string, number>>;
  /** Operations that needed more than one attempt. */
  readonly retried: number;
  /**
   * Operations that ended on an indefinite answer (5xx, network): their retries spent, or an account creation
   * (the admin API takes no key: never retried).
   */
  readonly unanswered: number;
  /**
   * Keyed operations that a client allowed one retry would not have completed: their definitive answer took
   * more than two attempts, or never came. Accounts (no key, sent once) are not counted.
   */
  readonly beyondOneRetry: number;
  /** The searches of this stretch (when the load searches, see `LoadMix.searchPauseMs`). */
  readonly searches: SearchTally;
}

/**
 * Searches through the gateway (lexical and semantic, in turn), each sent once and, on an indefinite answer,
 * once more to the next gateway; `failed` are those whose second attempt was not a 200 either.
 */
export interface SearchTally {
  readonly sent: number;
  /** Answers to every attempt, by HTTP status or `network`/`timeout`. */
  readonly outcomes: Record<string, number>;
  readonly retried: number;
  readonly failed: number;
}

/**
 * One logical operation sent with an idempotency key (publish, quote request, quick_buy): the key, what its
 * client was finally told, and the stream it was told about (when 2xx). The invariants match these against the
 * services' `idempotency_keys` tables.
 */
export interface KeyedOperation {
  readonly write: KeyedWrite;
  readonly key: string;
  readonly attempts: number;
  /** The last attempt's outcome: an HTTP status or `network`. */
  readonly outcome: string;
  /** The stream the 2xx answer named (`product_12`, `quote_3`, `order_7`). */
  readonly stream?: string;
}

/** How often each kind of write comes up: one call in `accountEvery` creates an account, and so on. */
export interface LoadMix {
  readonly workers: number;
  readonly pauseMs: number;
  readonly accountEvery: number;
  readonly quoteEvery: number;
  readonly orderEvery: number;
  /** When set, one more loop searches, pausing this long between searches (the replica topology's runs). */
  readonly searchPauseMs?: number;
}

/** The accounts the load writes with. */
export interface LoadAccounts {
  readonly sellerKey: string;
  readonly buyerKey: string;
}

/** What a write answered: its status (or `network`) and, when 2xx, the stream it wrote and the event store's schema. */
interface Written {
  readonly outcome: string;
  readonly stream?: { readonly schema: string; readonly id: string };
}

type Write = 'publish' | 'account' | 'quote' | 'order';
export type KeyedWrite = 'publish' | 'quote' | 'order';

/** The event store (schema) of each keyed write, whose `idempotency_keys` table records its keys. */
export const SCHEMA_OF_KEYED_WRITE: Readonly<Record<KeyedWrite, string>> = {
  publish: 'listing',
  quote: 'quote',
  order: 'order',
};

/**
 * Answers that do not say whether the write happened: no answer at all (connection refused or dropped,
 * timeout), and the 5xx a lost backend or a broken connection gives. An operation with an idempotency key is
 * retried on these with the same key; anything else (2xx, 4xx) is its answer.
 */
const INDEFINITE = /^(network|timeout|500|502|503|504)$/;
export const isIndefinite = (outcome: string): boolean => INDEFINITE.test(outcome);

/**
 * Retries of a keyed operation: at most RETRY.attempts attempts, the pause doubling from RETRY.firstPauseMs up
 * to RETRY.maxPauseMs (with up to 50% jitter), and no new attempt once RETRY.budgetMs have passed since the
 * first. The budget outlasts the restarts of these runs (a killed service is back within 5 to 50 s on the loaded
 * machine, the harness waits up to 60 s), so an operation whose effect happened is normally told so; one that
 * runs out is counted as unanswered. (The first keyed runs had 12 attempts and 45 s: a gateway back after 50 s
 * left operations whose last attempt timed out while its write went through.) A worker
 * goes on with new operations while at most RETRY.pendingPerWorker of its operations retry.
 */
export const RETRY = {
  attempts: 50,
  firstPauseMs: 200,
  maxPauseMs: 3_000,
  budgetMs: 120_000,
  pendingPerWorker: 32,
} as const;

/** A listing is asked for a quote or bought once the quote service had time to project it. */
const SETTLED_MS = 3_000;
/** How many settled listings the relay crash's order tries before it gives up on finding one in stock. */
const SOLD_OUT_TRIES = 20;

/**
 * What a request that got no answer saw: `timeout` when the client gave up after its 10 s (the request may have
 * been served), `network` otherwise (refused, reset: the gateway was down or died).
 */
const noAnswer = (error: unknown): string =>
  (error as { name?: unknown } | undefined)?.name === 'TimeoutError' ? 'timeout' : 'network';

const statusOf = (error: unknown): string => /answered (\d{3})/.exec(String(error))?.[1] ?? noAnswer(error);

/**
 * Steady write load through the gateway: `workers` loops publishing listings, and in between creating seller
 * accounts (the gateway's outbox), anonymous quote requests (the quote service's) and quick_buy orders (the
 * order service's, which reserve stock in the listing service). Every 2xx'd write is remembered by the event
 * store that must hold it: the invariants check that each of them is present after the faults.
 */
export class SteadyLoad {
  /** Stream ids answered 2xx over the whole run, by the schema of their event store. */
  readonly acknowledged = new Map<string, Set<string>>();
  private readonly published: { id: string; at: number }[] = [];
  /** Every keyed operation that ended, over the whole run. */
  readonly keyed: KeyedOperation[] = [];
  private outcomes: Record<string, number> = {};
  private byWrite: Record<string, Record<string, number>> = {};
  private finalOutcomes: Record<string, number> = {};
  private finalByWrite: Record<string, Record<string, number>> = {};
  private attempts = 0;
  private operations = 0;
  private retried = 0;
  private unanswered = 0;
  private beyondOneRetry = 0;
  private searches = { sent: 0, outcomes: {} as Record<string, number>, retried: 0, failed: 0 };
  /** Which gateway the next operation starts on: operations go round robin, a retry to the next gateway. */
  private nextGateway = 0;
  private running: Promise<void>[] = [];
  private stopping = false;
  private sequence = 0;

  constructor(
    private readonly cluster: Cluster,
    private readonly accounts: LoadAccounts,
    private readonly mix: LoadMix,
  ) {}

  start(): void {
    if (this.running.length > 0) throw new Error('the load is already running');
    this.stopping = false;
    this.outcomes = {};
    this.byWrite = {};
    this.finalOutcomes = {};
    this.finalByWrite = {};
    this.attempts = 0;
    this.operations = 0;
    this.retried = 0;
    this.unanswered = 0;
    this.beyondOneRetry = 0;
    this.searches = { sent: 0, outcomes: {}, retried: 0, failed: 0 };
    for (let worker = 0; worker < this.mix.workers; worker++) this.running.push(this.loop());
    if (this.mix.searchPauseMs !== undefined) this.running.push(this.searchLoop(this.mix.searchPauseMs));
  }

  /** Stops after the requests in flight have answered; returns what this stretch of load saw. */
  async stop(): Promise<LoadTally> {
    this.stopping = true;
    await Promise.all(this.running);
    this.running = [];
    return {
      attempts: this.attempts,
      outcomes: this.outcomes,
      byWrite: this.byWrite,
      operations: this.operations,
      finalOutcomes: this.finalOutcomes,
      finalByWrite: this.finalByWrite,
      retried: this.retried,
      unanswered: this.unanswered,
      beyondOneRetry: this.beyondOneRetry,
      searches: this.searches,
    };
  }

  /** The gateway of attempt `attempt` (0 first) of an operation that started on gateway `start`. */
  private gatewayOf(start: number, attempt: number): MarketplaceClient {
    const { gateways } = this.cluster;
    return gateways[(start + attempt) % gateways.length]!;
  }

  private startingGateway(): number {
    return this.nextGateway++;
  }

  /**
   * Searches until stopped, lexical (the run's word) and semantic in turn, each once and, after an indefinite
   * answer, once more on the next gateway. Every listing carries the run's word, so both have answers.
   */
  private async searchLoop(pauseMs: number): Promise<void> {
    for (let n = 0; !this.stopping; n++) {
      const start = this.startingGateway();
      let outcome = '';
      for (let attempt = 0; attempt < 2; attempt++) {
        outcome = await this.search(this.gatewayOf(start, attempt), n);
        this.searches.outcomes[outcome] = (this.searches.outcomes[outcome] ?? 0) + 1;
        if (!isIndefinite(outcome)) break;
        if (attempt === 0) this.searches.retried++;
      }
      this.searches.sent++;
      if (outcome !== '200') this.searches.failed++;
      await pause(pauseMs);
    }
  }

  private async search(gateway: MarketplaceClient, n: number): Promise<string> {
    try {
      const { status } =
        n % 2 === 0
          ? await gateway.request(`/api/ucp/catalog/products?q=${RUN_WORD}&limit=20`)
          : await gateway.request('/api/ucp/catalog/search', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ query: `${RUN_WORD} returned goods pallet`, limit: 10 }),
            });
      return String(status);
    } catch (error) {
      return noAnswer(error);
    }
  }

  /** A write answered 2xx outside the load (the run's own accounts): its stream must be in its event store too. */
  acknowledge(schema: string, id: string): void {
    this.record({ outcome: '201', stream: { schema, id } });
  }

  /** One write whose event lands in the outbox of `service` (for the relay crash); throws unless 2xx. */
  async writeThrough(service: ServiceName): Promise<void> {
    const n = this.sequence++;
    // Chosen once: every attempt of an operation sends the same body with its key.
    const listing = this.settledListing(n) ?? this.published.at(-1)?.id;
    const writes: Partial<Record<ServiceName, () => Promise<Written>>> = {
      listing: () => this.keyedOperation('publish', (key, gateway) => this.publish(gateway, n, key)),
      gateway: () => this.createAccount(n),
      quote: () =>
        this.keyedOperation('quote', (key, gateway) => this.requestQuote(gateway, n, listing, key)),
      order: () => this.buyFromAnyInStock(n),
      // A search nothing matches: the run's own saved search stays the only one listings match.
      subscription: () => this.subscribe(`relaycrash${n}`),
    };
    const write = writes[service];
    if (!write) throw new Error(`no write goes through the outbox of ${service}`);
    const { outcome } = this.record(await write());
    if (!/^2\d\d$/.test(outcome)) throw new Error(`the write through ${service} answered ${outcome}`);
  }

  /**
   * One unit of a settled listing through quick_buy; a listing the load has sold out answers 409, so the next
   * settled one is tried (a lot of 1 sells out at its first order).
   */
  private async buyFromAnyInStock(n: number): Promise<Written> {
    let written: Written = { outcome: 'no settled listing' };
    for (let attempt = 0; attempt < SOLD_OUT_TRIES; attempt++) {
      const listing = this.settledListing(n + attempt) ?? this.published.at(-1)?.id;
      written = await this.keyedOperation('order', (key, gateway) => this.quickBuy(gateway, n, listing, key));
      if (written.outcome !== '409') break;
    }
    return written;
  }

  /**
   * One logical operation with a fresh idempotency key: sent again with the same key (and the same body) after
   * an indefinite answer, within RETRY, so that a write that happened is answered. Every attempt is tallied
   * when `tally` (the load's own writes), and the operation is remembered for the invariants either way.
   */
  private async keyedOperation(
    write: KeyedWrite,
    attempt: (key: string, gateway: MarketplaceClient) => Promise<Written>,
    tally?: (outcome: string) => void,
  ): Promise<Written> {
    const key = randomUUID();
    const start = this.startingGateway();
    const started = Date.now();
    let written: Written;
    let attempts = 0;
    for (let pauseMs: number = RETRY.firstPauseMs; ; pauseMs = Math.min(pauseMs * 2, RETRY.maxPauseMs)) {
      written = await attempt(key, this.gatewayOf(start, attempts));
      attempts++;
      tally?.(written.outcome);
      const spent = attempts >= RETRY.attempts || Date.now() - started + pauseMs > RETRY.budgetMs;
      if (!isIndefinite(written.outcome) || spent) break;
      await pause(pauseMs * (1 + Math.random() / 2));
    }
    if (attempts > 2 || isIndefinite(written.outcome)) this.beyondOneRetry++;
    this.keyed.push({
      write,
      key,
      attempts,
      outcome: written.outcome,
      ...(written.stream ? { stream: written.stream.id } : {}),
    });
    return written;
  }

  /** The run's saved search, on the word every listing carries: the matcher's effect is checked against it. */
  async subscribeToRun(): Promise<string> {
    const { outcome, stream } = this.record(await this.subscribe(RUN_WORD));
    if (!stream) throw new Error(`the run's saved search answered ${outcome}`);
    return stream.id;
  }

  /** A saved search on `search` with an MCP resource channel. */
  private async subscribe(search: string): Promise<Written> {
    try {
      const { status, body } = await this.cluster.client.request('/api/subscriptions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mcp-api-key': this.accounts.buyerKey },
        body: JSON.stringify({ query: { search }, channels: [{ type: 'mcp_resource' }] }),
      });
      const id = status === 201 ? (body as { id: string }).id : undefined;
      return { outcome: String(status), ...(id ? { stream: { schema: 'subscription', id } } : {}) };
    } catch (error) {
      return { outcome: noAnswer(error) };
    }
  }

  /**
   * One worker: starts an operation, and once its first attempt answered, either goes on after it ended (a
   * definitive answer) or leaves its retries running and starts the next one, so that the other writes keep
   * coming while one service is down; at most RETRY.pendingPerWorker operations of a worker retry at once. The
   * worker ends when every operation it started has ended.
   */
  private async loop(): Promise<void> {
    const retrying = new Set<Promise<void>>();
    while (!this.stopping) {
      const n = this.sequence++;
      const [write, run] = this.nextWrite(n);
      let attempts = 0;
      let answerFirst: (outcome: string) => void = () => undefined;
      const firstAnswer = new Promise<string>((resolve) => (answerFirst = resolve));
      const tally = (outcome: string): void => {
        if (attempts === 0) answerFirst(outcome);
        attempts++;
        this.attempts++;
        this.outcomes[outcome] = (this.outcomes[outcome] ?? 0) + 1;
        const ofWrite = (this.byWrite[write] ??= {});
        ofWrite[outcome] = (ofWrite[outcome] ?? 0) + 1;
      };
      const ended = run(tally).then((written) => {
        const { outcome } = this.record(written);
        this.operations++;
        this.finalOutcomes[outcome] = (this.finalOutcomes[outcome] ?? 0) + 1;
        const finalOfWrite = (this.finalByWrite[write] ??= {});
        finalOfWrite[outcome] = (finalOfWrite[outcome] ?? 0) + 1;
        if (attempts > 1) this.retried++;
        if (isIndefinite(outcome)) this.unanswered++;
      });
      const first = await firstAnswer;
      if (isIndefinite(first)) {
        retrying.add(ended);
        void ended.finally(() => retrying.delete(ended));
        while (retrying.size >= RETRY.pendingPerWorker) await Promise.race(retrying);
      } else {
        await ended;
      }
      // After a refused connection, do not spin while the gateway restarts.
      await pause(first === 'network' ? 100 : this.mix.pauseMs);
    }
    await Promise.all(retrying);
  }

  /**
   * The next write and how to run it, tallying each attempt. Account creation (the admin API) takes no
   * idempotency key: it is sent once, never retried, as before.
   */
  private nextWrite(n: number): [Write, (tally: (outcome: string) => void) => Promise<Written>] {
    const { accountEvery, quoteEvery, orderEvery } = this.mix;
    const listing = this.settledListing(n);
    if (n % accountEvery === 0) {
      return [
        'account',
        async (tally) => {
          const written = await this.createAccount(n);
          tally(written.outcome);
          return written;
        },
      ];
    }
    if (listing && n % quoteEvery === 1) {
      return [
        'quote',
        (tally) =>
          this.keyedOperation('quote', (key, gateway) => this.requestQuote(gateway, n, listing, key), tally),
      ];
    }
    if (listing && n % orderEvery === 2) {
      return [
        'order',
        (tally) =>
          this.keyedOperation('order', (key, gateway) => this.quickBuy(gateway, n, listing, key), tally),
      ];
    }
    return [
      'publish',
      (tally) => this.keyedOperation('publish', (key, gateway) => this.publish(gateway, n, key), tally),
    ];
  }

  private record(written: Written): Written {
    if (written.stream) {
      const { schema, id } = written.stream;
      const ids = this.acknowledged.get(schema) ?? new Set<string>();
      this.acknowledged.set(schema, ids.add(id));
    }
    return written;
  }

  /** One of the listings published more than SETTLED_MS ago, spread over them by `n`. */
  private settledListing(n: number): string | undefined {
    const settled = this.published.filter(({ at }) => Date.now() - at > SETTLED_MS);
    return settled[(n * 7919) % Math.max(1, settled.length)]?.id;
  }

  private async publish(gateway: MarketplaceClient, n: number, idempotencyKey: string): Promise<Written> {
    try {
      const { status, body } = await gateway.publish(
        this.accounts.sellerKey,
        {
          name: `${RUN_WORD} pallet ${n}`,
          description: 'Returned goods, sorted and counted',
          imageUrl: this.cluster.images.imageUrl(`pallet${n % 16}`),
          price: 10 + (n % 50),
          quantity: 1 + (n % 40),
          instantCheckout: true,
          promotePublicly: true,
        },
        { idempotencyKey },
      );
      if (status !== 201) return { outcome: String(status) };
      // A retry answers the listing its first attempt created: remember it once.
      if (!this.published.some(({ id }) => id === body.id)) {
        this.published.push({ id: body.id, at: Date.now() });
      }
      return { outcome: '201', stream: { schema: 'listing', id: body.id } };
    } catch (error) {
      return { outcome: noAnswer(error) };
    }
  }

  private async createAccount(n: number): Promise<Written> {
    try {
      const admin = new MarketplaceClient(
        this.gatewayOf(this.startingGateway(), 0).baseUrl,
        this.cluster.adminToken,
      );
      const { accountId } = await admin.createAccount('seller', `Fault Seller ${n}`);
      return { outcome: '201', stream: { schema: 'identity', id: `account_${accountId}` } };
    } catch (error) {
      // createAccount throws "account creation answered <status>" or a fetch failure.
      return { outcome: statusOf(error) };
    }
  }

  /** An anonymous quote request for more units than a quick_buy takes. */
  private async requestQuote(
    gateway: MarketplaceClient,
    n: number,
    productId: string | undefined,
    idempotencyKey: string,
  ): Promise<Written> {
    try {
      const { status, body } = await gateway.request('/api/ucp/quotes', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify({
          product_id: productId,
          quantity: 50 + (n % 100),
          buyer: { email: `fault.buyer.${n}@example.com` },
        }),
      });
      if (status !== 201) return { outcome: String(status) };
      const id = (body as { quote_request_id: number }).quote_request_id;
      return { outcome: '201', stream: { schema: 'quote', id: `quote_${id}` } };
    } catch (error) {
      return { outcome: noAnswer(error) };
    }
  }

  /** quick_buy of one unit: an order, with stock reserved in the listing service (409 once sold out). */
  private async quickBuy(
    gateway: MarketplaceClient,
    n: number,
    productId: string | undefined,
    idempotencyKey: string,
  ): Promise<Written> {
    try {
      const { status, body } = await gateway.request('/api/mcp/invoke', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mcp-api-key': this.accounts.buyerKey },
        body: JSON.stringify({
          tool: 'quick_buy',
          parameters: {
            product_id: productId,
            quantity: 1,
            buyer_email: `fault.buyer.${n}@example.com`,
            shipping_country: 'US',
            idempotency_key: idempotencyKey,
          },
        }),
      });
      if (status !== 200) return { outcome: String(status) };
      const id = (body as { order: { order_id: number } }).order.order_id;
      return { outcome: '200', stream: { schema: 'order', id: `order_${id}` } };
    } catch (error) {
      return { outcome: noAnswer(error) };
    }
  }
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
