import type { Cluster } from '../src/harness/cluster.js';
import type { ServiceName } from './topology.js';

/** The word every listing of a fault run carries, so search can be asked for all of them. */
export const RUN_WORD = 'quillhaven';

export interface LoadTally {
  readonly attempts: number;
  /** Answers by HTTP status, and `network` for requests that got no answer (the gateway was down). */
  readonly outcomes: Record<string, number>;
  /** The same, by kind of write (publish, account, quote, order). */
  readonly byWrite: Record<string, Record<string, number>>;
}

/** How often each kind of write comes up: one call in `accountEvery` creates an account, and so on. */
export interface LoadMix {
  readonly workers: number;
  readonly pauseMs: number;
  readonly accountEvery: number;
  readonly quoteEvery: number;
  readonly orderEvery: number;
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

/** A listing is asked for a quote or bought once the quote service had time to project it. */
const SETTLED_MS = 3_000;

const statusOf = (error: unknown): string => /answered (\d{3})/.exec(String(error))?.[1] ?? 'network';

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
  private outcomes: Record<string, number> = {};
  private byWrite: Record<string, Record<string, number>> = {};
  private attempts = 0;
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
    this.attempts = 0;
    for (let worker = 0; worker < this.mix.workers; worker++) this.running.push(this.loop());
  }

  /** Stops after the requests in flight have answered; returns what this stretch of load saw. */
  async stop(): Promise<LoadTally> {
    this.stopping = true;
    await Promise.all(this.running);
    this.running = [];
    return { attempts: this.attempts, outcomes: this.outcomes, byWrite: this.byWrite };
  }

  /** One write whose event lands in the outbox of `service` (for the relay crash); throws unless 2xx. */
  async writeThrough(service: ServiceName): Promise<void> {
    const n = this.sequence++;
    const writes: Partial<Record<ServiceName, () => Promise<Written>>> = {
      listing: () => this.publish(n),
      gateway: () => this.createAccount(n),
      quote: () => this.requestQuote(n, this.settledListing(n) ?? this.published.at(-1)?.id),
      order: () => this.quickBuy(n, this.settledListing(n) ?? this.published.at(-1)?.id),
      // A search nothing matches: the run's own saved search stays the only one listings match.
      subscription: () => this.subscribe(`relaycrash${n}`),
    };
    const write = writes[service];
    if (!write) throw new Error(`no write goes through the outbox of ${service}`);
    const { outcome } = this.record(await write());
    if (!/^2\d\d$/.test(outcome)) throw new Error(`the write through ${service} answered ${outcome}`);
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
    } catch {
      return { outcome: 'network' };
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      const n = this.sequence++;
      const [write, run] = this.nextWrite(n);
      const { outcome } = this.record(await run());
      this.attempts++;
      this.outcomes[outcome] = (this.outcomes[outcome] ?? 0) + 1;
      const ofWrite = (this.byWrite[write] ??= {});
      ofWrite[outcome] = (ofWrite[outcome] ?? 0) + 1;
      // After a refused connection, do not spin while the gateway restarts.
      await pause(outcome === 'network' ? 100 : this.mix.pauseMs);
    }
  }

  private nextWrite(n: number): [Write, () => Promise<Written>] {
    const { accountEvery, quoteEvery, orderEvery } = this.mix;
    const listing = this.settledListing(n);
    if (n % accountEvery === 0) return ['account', () => this.createAccount(n)];
    if (listing && n % quoteEvery === 1) return ['quote', () => this.requestQuote(n, listing)];
    if (listing && n % orderEvery === 2) return ['order', () => this.quickBuy(n, listing)];
    return ['publish', () => this.publish(n)];
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

  private async publish(n: number): Promise<Written> {
    try {
      const { status, body } = await this.cluster.client.publish(this.accounts.sellerKey, {
        name: `${RUN_WORD} pallet ${n}`,
        description: 'Returned goods, sorted and counted',
        imageUrl: this.cluster.images.imageUrl(`pallet${n % 16}`),
        price: 10 + (n % 50),
        quantity: 1 + (n % 40),
        instantCheckout: true,
        promotePublicly: true,
      });
      if (status !== 201) return { outcome: String(status) };
      this.published.push({ id: body.id, at: Date.now() });
      return { outcome: '201', stream: { schema: 'listing', id: body.id } };
    } catch {
      return { outcome: 'network' };
    }
  }

  private async createAccount(n: number): Promise<Written> {
    try {
      const { accountId } = await this.cluster.adminClient().createAccount('seller', `Fault Seller ${n}`);
      return { outcome: '201', stream: { schema: 'identity', id: `account_${accountId}` } };
    } catch (error) {
      // createAccount throws "account creation answered <status>" or a fetch failure.
      return { outcome: statusOf(error) };
    }
  }

  /** An anonymous quote request for more units than a quick_buy takes. */
  private async requestQuote(n: number, productId: string | undefined): Promise<Written> {
    try {
      const { status, body } = await this.cluster.client.request('/api/ucp/quotes', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          product_id: productId,
          quantity: 50 + (n % 100),
          buyer: { email: `fault.buyer.${n}@example.com` },
        }),
      });
      if (status !== 201) return { outcome: String(status) };
      const id = (body as { quote_request_id: number }).quote_request_id;
      return { outcome: '201', stream: { schema: 'quote', id: `quote_${id}` } };
    } catch {
      return { outcome: 'network' };
    }
  }

  /** quick_buy of one unit: an order, with stock reserved in the listing service (409 once sold out). */
  private async quickBuy(n: number, productId: string | undefined): Promise<Written> {
    try {
      const { status, body } = await this.cluster.client.request('/api/mcp/invoke', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mcp-api-key': this.accounts.buyerKey },
        body: JSON.stringify({
          tool: 'quick_buy',
          parameters: {
            product_id: productId,
            quantity: 1,
            buyer_email: `fault.buyer.${n}@example.com`,
            shipping_country: 'US',
          },
        }),
      });
      if (status !== 200) return { outcome: String(status) };
      const id = (body as { order: { order_id: number } }).order.order_id;
      return { outcome: '200', stream: { schema: 'order', id: `order_${id}` } };
    } catch {
      return { outcome: 'network' };
    }
  }
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
