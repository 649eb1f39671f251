import type { Cluster } from '../src/harness/cluster.js';

/** The word every listing of a fault run carries, so search can be asked for all of them. */
export const RUN_WORD = 'quillhaven';

export interface LoadTally {
  readonly attempts: number;
  /** Answers by HTTP status, and `network` for requests that got no answer (the gateway was down). */
  readonly outcomes: Record<string, number>;
}

/**
 * Steady write load through the gateway: `workers` loops publishing listings (and, one call in `accountEvery`,
 * creating a seller account, so the gateway's own outbox has traffic too). Every 2xx'd write is remembered:
 * the invariants check that each of them is present after the faults.
 */
export class SteadyLoad {
  /** Product ids the gateway answered 201 for, over the whole run. */
  readonly acknowledgedListings = new Set<string>();
  /** Account ids the admin API answered 201 for, over the whole run. */
  readonly acknowledgedAccounts = new Set<number>();
  private outcomes: Record<string, number> = {};
  private attempts = 0;
  private running: Promise<void>[] = [];
  private stopping = false;
  private sequence = 0;

  constructor(
    private readonly cluster: Cluster,
    private readonly sellerKey: string,
    private readonly options: { workers: number; pauseMs: number; accountEvery: number },
  ) {}

  start(): void {
    if (this.running.length > 0) throw new Error('the load is already running');
    this.stopping = false;
    this.outcomes = {};
    this.attempts = 0;
    for (let worker = 0; worker < this.options.workers; worker++) this.running.push(this.loop());
  }

  /** Stops after the requests in flight have answered; returns what this stretch of load saw. */
  async stop(): Promise<LoadTally> {
    this.stopping = true;
    await Promise.all(this.running);
    this.running = [];
    return { attempts: this.attempts, outcomes: this.outcomes };
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      const n = this.sequence++;
      const outcome = await (n % this.options.accountEvery === 0 ? this.createAccount(n) : this.publish(n));
      this.attempts++;
      this.outcomes[outcome] = (this.outcomes[outcome] ?? 0) + 1;
      // After a refused connection, do not spin while the gateway restarts.
      await pause(outcome === 'network' ? 100 : this.options.pauseMs);
    }
  }

  private async publish(n: number): Promise<string> {
    try {
      const { status, body } = await this.cluster.client.publish(this.sellerKey, {
        name: `${RUN_WORD} pallet ${n}`,
        description: 'Returned goods, sorted and counted',
        imageUrl: this.cluster.images.imageUrl(`pallet${n % 16}`),
        price: 10 + (n % 50),
        quantity: 1 + (n % 40),
        promotePublicly: true,
      });
      if (status === 201) this.acknowledgedListings.add(body.id);
      return String(status);
    } catch {
      return 'network';
    }
  }

  private async createAccount(n: number): Promise<string> {
    try {
      const { accountId } = await this.cluster.adminClient().createAccount('seller', `Fault Seller ${n}`);
      this.acknowledgedAccounts.add(accountId);
      return '201';
    } catch (error) {
      // createAccount throws "account creation answered <status>" or a fetch failure.
      return /answered (\d{3})/.exec(String(error))?.[1] ?? 'network';
    }
  }
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
