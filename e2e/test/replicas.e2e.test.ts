import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from '../src/harness/cluster.js';
import type { MarketplaceClient } from '../src/harness/marketplace-client.js';
import { eventually } from '../src/harness/processes.js';

/** Listings published through the gateways; docs/operations.md gives the figures of a run. */
const LISTINGS = Number(process.env['REPLICAS_E2E_LISTINGS'] ?? 500);
/** The bound from the last publication to identical answers everywhere (docs/operations.md, "Scaling"). */
const CONVERGENCE_MS = 120_000;
const PUBLISHERS = 6;

const KINDS = [
  {
    name: 'Pallet of Dell Latitude laptops',
    description: 'Intel Core i5 notebooks',
    category: 'electronics',
  },
  { name: 'Lot of leather sofas', description: 'three-seat couches, brown', category: 'home_goods' },
  { name: 'Case of cordless drills', description: 'power tools with batteries', category: 'tools' },
  { name: 'Box of kids toys', description: 'plush animals and puzzles', category: 'toys' },
] as const;
const LEXICAL = ['laptops', 'sofas', 'drills', 'toys', 'lot', ''];
const SEMANTIC = ['portable computers for a school', 'furniture for a living room', 'tools to build a shed'];

interface SemanticAnswer {
  readonly products: readonly { id: string; similarity: number }[];
}

/**
 * Two catalog replicas and two gateways in cluster mode: every listing is projected by the one catalog replica
 * whose consumer owns its partition, yet every lexical and semantic search, through either gateway (which
 * balances over both catalogs), answers the same.
 */
describe('two catalog replicas behind two gateways', () => {
  let cluster: Cluster;
  let sellerKey: string;

  const lexical = async (gateway: MarketplaceClient, q: string): Promise<string> => {
    const page = await gateway.search({ q, limit: 100 });
    return JSON.stringify([page.pagination.total, page.products.map((product) => product.id)]);
  };
  const semantic = async (gateway: MarketplaceClient, query: string): Promise<string> => {
    const { status, body } = await gateway.request('/api/ucp/catalog/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, limit: 50 }),
    });
    if (status !== 200) throw new Error(`semantic search answered ${status}: ${JSON.stringify(body)}`);
    return JSON.stringify((body as SemanticAnswer).products.map((product) => product.id));
  };
  /**
   * Every answer from every gateway, each query asked four times per gateway so that round robin sends it to
   * both catalog replicas.
   */
  const everyAnswer = async (): Promise<Map<string, Set<string>>> => {
    const answers = new Map<string, Set<string>>();
    const record = (key: string, answer: string): void => {
      answers.set(key, (answers.get(key) ?? new Set()).add(answer));
    };
    for (const gateway of cluster.gateways) {
      for (let round = 0; round < 4; round++) {
        for (const q of LEXICAL) record(`lexical:${q}`, await lexical(gateway, q));
        for (const query of SEMANTIC) record(`semantic:${query}`, await semantic(gateway, query));
      }
    }
    return answers;
  };

  beforeAll(async () => {
    cluster = await Cluster.start({ replicas: { catalog: 2, gateway: 2 } });
    sellerKey = (await cluster.adminClient().createAccount('seller', 'Replica Seller')).apiKey;
  }, 300_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it(`answers every search the same through either gateway after ${LISTINGS} listings`, async () => {
    let next = 0;
    const publish = async (gateway: MarketplaceClient): Promise<void> => {
      for (let n = next++; n < LISTINGS; n = next++) {
        const kind = KINDS[n % KINDS.length]!;
        const published = await gateway.publish(
          sellerKey,
          {
            ...kind,
            name: `${kind.name} #${n}`,
            imageUrl: cluster.images.imageUrl(`replica-${n}`),
            price: 10 + n,
            quantity: 5,
            promotePublicly: true,
          },
          { idempotencyKey: `replicas-${n}` },
        );
        expect(published.status).toBe(201);
      }
    };
    // Half the publishers on each gateway.
    await Promise.all(
      Array.from({ length: PUBLISHERS }, (_, i) => publish(cluster.gateways[i % cluster.gateways.length]!)),
    );
    const lastPublished = Date.now();

    const answers = await eventually(
      async () => {
        const all = await everyAnswer();
        const total = JSON.parse([...all.get('lexical:')!][0]!) as [number, string[]];
        const identical = [...all.values()].every((distinct) => distinct.size === 1);
        return identical && total[0] === LISTINGS ? all : undefined;
      },
      { timeoutMs: CONVERGENCE_MS, intervalMs: 500, describe: () => cluster.describeProcesses() },
    );
    const convergedMs = Date.now() - lastPublished;
    process.stdout.write(
      `replicas e2e: ${LISTINGS} listings, identical answers ${convergedMs} ms after the last\n`,
    );

    expect(convergedMs).toBeLessThan(CONVERGENCE_MS);
    for (const query of SEMANTIC) {
      expect(JSON.parse([...answers.get(`semantic:${query}`)!][0]!)).toHaveLength(Math.min(50, LISTINGS));
    }
    const [laptops] = JSON.parse([...answers.get('lexical:laptops')!][0]!) as [number, string[]];
    expect(laptops).toBe(Math.ceil(LISTINGS / KINDS.length));
    expect(cluster.process('catalog').running && cluster.process('catalog-2').running).toBe(true);
  }, 900_000);
});
