import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_PUBLIC_BASE_URL } from '@marketplace/platform';
import type { CliIo } from '../../contexts/identity/accounts.cli.js';
import { DEMO_LISTINGS } from './demo-listings.js';
import { callMarketplace, describeRefusal } from './marketplace-http.js';

export const DEMO_USAGE = `usage: marketplace demo [--keys-file PATH]
Seeds a running marketplace through its admin and public APIs: a demo seller with ${DEMO_LISTINGS.length} public lots,
a buyer and the buyer's saved search, then prints their keys and three commands to try. Each run creates new
accounts and lots (the keys of earlier runs keep working). --keys-file writes MARKETPLACE_URL, SELLER_KEY,
BUYER_KEY and DEMO_PRODUCT for a shell to source. Needs ADMIN_TOKEN and MARKETPLACE_URL (default
http://localhost:8080).
`;

const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
const PUBLISH_CONCURRENCY = 4;
const CATALOG_WAIT_MS = 60_000;

class Refused extends Error {}

interface Account {
  readonly accountId: number;
  readonly apiKey: string;
}

/** `marketplace demo` (README, "A first session"). Resolves to the exit status. */
export const runDemoCli = async (argv: readonly string[], io: CliIo): Promise<number> => {
  let keysFile: string | undefined;
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: { 'keys-file': { type: 'string' } },
      strict: true,
    });
    keysFile = values['keys-file'];
  } catch (error) {
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n${DEMO_USAGE}`);
    return EXIT.usage;
  }
  const adminToken = io.env['ADMIN_TOKEN'];
  if (!adminToken) {
    io.stderr.write('error: ADMIN_TOKEN is not set; it must match the marketplace’s ADMIN_TOKEN\n');
    return EXIT.usage;
  }
  const baseUrl = io.env['MARKETPLACE_URL'] || DEFAULT_PUBLIC_BASE_URL;
  try {
    new URL(baseUrl);
  } catch {
    io.stderr.write(`error: MARKETPLACE_URL is not a URL: ${baseUrl}\n`);
    return EXIT.usage;
  }
  try {
    await seed(new Demo(baseUrl, adminToken, io), keysFile, io);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    io.stderr.write(`error: ${error.message}\n`);
    return EXIT.failed;
  }
};

class Demo {
  constructor(
    readonly baseUrl: string,
    private readonly adminToken: string,
    private readonly io: CliIo,
  ) {}

  /** A 2xx answer's JSON; anything else throws Refused with a readable line. */
  async call(path: string, init: { method?: string; key?: string; body?: unknown } = {}): Promise<unknown> {
    const url = new URL(path, this.baseUrl);
    const outcome = await callMarketplace(
      url,
      {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers: {
          ...(path.startsWith('/api/admin/') ? { authorization: `Bearer ${this.adminToken}` } : {}),
          ...(init.key === undefined ? {} : { 'x-mcp-api-key': init.key }),
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      },
      this.io.fetch,
    );
    if (!outcome.reached) throw new Refused(outcome.message);
    if (outcome.status < 200 || outcome.status > 299) {
      throw new Refused(`${path}: ${describeRefusal(url, outcome.status, outcome.text)}`);
    }
    return outcome.text === '' ? undefined : (JSON.parse(outcome.text) as unknown);
  }

  async createAccount(role: 'seller' | 'buyer', name: string, email: string): Promise<Account> {
    const body = { role, name, email, company: name, country: 'US' };
    const created = (await this.call('/api/admin/accounts', { body })) as {
      account_id: number;
      api_key: string;
    };
    return { accountId: created.account_id, apiKey: created.api_key };
  }
}

const seed = async (demo: Demo, keysFile: string | undefined, io: CliIo): Promise<void> => {
  // A run stamp keeps each run's emails and SKUs apart, so a second run never collides with the first.
  const run = Date.now().toString(36);
  const seller = await demo.createAccount(
    'seller',
    'Demo Liquidators',
    `demo-seller+${run}@marketplace.example`,
  );
  const buyerEmail = `demo-buyer+${run}@marketplace.example`;
  const buyer = await demo.createAccount('buyer', 'Demo Buyer', buyerEmail);
  io.stderr.write(`accounts created: seller ${seller.accountId}, buyer ${buyer.accountId}\n`);

  const ids: string[] = new Array<string>(DEMO_LISTINGS.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: PUBLISH_CONCURRENCY }, async () => {
      while (next < DEMO_LISTINGS.length) {
        const n = next++;
        const listing = DEMO_LISTINGS[n]!;
        const body = {
          ...listing,
          sku: `DEMO-${run}-${String(n + 1).padStart(2, '0')}`,
          promotePublicly: true,
        };
        const created = (await demo.call('/api/products', { key: seller.apiKey, body })) as { id: string };
        ids[n] = created.id;
      }
    }),
  );
  io.stderr.write(`${ids.length} listings published\n`);

  const subscription = (await demo.call('/api/subscriptions', {
    key: buyer.apiKey,
    body: { query: { category: 'electronics', maxPrice: 5_000 }, channels: [{ type: 'mcp_resource' }] },
  })) as { id: string };

  // The first lot (the earbuds) is the one the printed commands search and quote.
  const product = ids[0]!;
  await waitForCatalog(demo, product, io);

  if (keysFile !== undefined) {
    // pnpm runs scripts from the workspace root; INIT_CWD is where the command was typed.
    const path = resolve(io.env['INIT_CWD'] ?? process.cwd(), keysFile);
    const lines = [
      `MARKETPLACE_URL=${demo.baseUrl}`,
      `SELLER_KEY=${seller.apiKey}`,
      `BUYER_KEY=${buyer.apiKey}`,
      `DEMO_PRODUCT=${product}`,
    ];
    await writeFile(path, lines.map((line) => `export ${line}\n`).join(''), { mode: 0o600 });
    io.stderr.write(`keys written to ${path}\n`);
  }

  const base = demo.baseUrl.replace(/\/$/, '');
  io.stdout.write(
    [
      `Demo seller "Demo Liquidators" (account ${seller.accountId}), ${ids.length} public lots`,
      `  SELLER_KEY=${seller.apiKey}`,
      `Demo buyer (account ${buyer.accountId}, ${buyerEmail}), saved search ${subscription.id} (electronics up to $50)`,
      `  BUYER_KEY=${buyer.apiKey}`,
      'The keys are shown once. Try:',
      `  curl -s '${base}/api/ucp/catalog/products?q=earbuds'`,
      `  curl -s ${base}/api/ucp/quotes -H 'X-MCP-API-Key: ${buyer.apiKey}' -H 'content-type: application/json' \\`,
      `    -d '{"product_id":"${product}","quantity":100,"buyer":{"email":"${buyerEmail}"},"target_price":950}'`,
      `  curl -s ${base}/api/products -H 'X-MCP-API-Key: ${seller.apiKey}' -H 'content-type: application/json' \\`,
      `    -d '{"name":"Pallet of phone cases","description":"Overstock","price":1.5,"quantity":900,"category":"electronics","promotePublicly":true}'`,
      '',
    ].join('\n'),
  );
};

/** The catalog follows the listing events; the commands printed work once it shows the first lot. */
const waitForCatalog = async (demo: Demo, productId: string, io: CliIo): Promise<void> => {
  const deadline = Date.now() + CATALOG_WAIT_MS;
  for (;;) {
    const page = (await demo.call('/api/ucp/catalog/products?q=earbuds&limit=100')) as {
      products: { id: string }[];
    };
    if (page.products.some(({ id }) => id === productId)) return;
    if (Date.now() > deadline) {
      io.stderr.write('the catalog does not show the demo lots yet; they appear within moments\n');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
};
