/** Plain HTTP calls through the gateway, as an agent or a seller's ERP would make them. */
export interface Product {
  readonly id: string;
  readonly title: string;
  readonly price: number;
  readonly [field: string]: unknown;
}

export interface SearchPage {
  readonly products: Product[];
  readonly pagination: { total: number; limit: number; offset: number; has_more: boolean };
}

export class MarketplaceClient {
  constructor(
    readonly baseUrl: string,
    private readonly adminToken?: string,
  ) {}

  async request(
    path: string,
    init: RequestInit = {},
  ): Promise<{ status: number; body: unknown; headers: Headers }> {
    const response = await fetch(new URL(path, this.baseUrl), {
      ...init,
      signal: init.signal ?? AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    const body: unknown =
      text.length > 0 && /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text;
    return { status: response.status, body, headers: response.headers };
  }

  async createAccount(
    role: 'seller' | 'buyer',
    name: string,
  ): Promise<{ accountId: number; apiKey: string }> {
    const { status, body } = await this.request('/api/admin/accounts', {
      method: 'POST',
      headers: { authorization: `Bearer ${this.adminToken ?? ''}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        role,
        name,
        email: `${name.toLowerCase().replace(/\W+/g, '.')}@example.com`,
        country: 'US',
      }),
    });
    if (status !== 201) throw new Error(`account creation answered ${status}: ${JSON.stringify(body)}`);
    const created = body as { account_id: number; api_key: string };
    return { accountId: created.account_id, apiKey: created.api_key };
  }

  /** POST /api/products; with `idempotencyKey`, its Idempotency-Key header (a retry answers the same listing). */
  async publish(
    apiKey: string,
    listing: Record<string, unknown>,
    { idempotencyKey }: { readonly idempotencyKey?: string } = {},
  ): Promise<{ status: number; body: Product }> {
    const { status, body } = await this.request('/api/products', {
      method: 'POST',
      headers: {
        'x-mcp-api-key': apiKey,
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      body: JSON.stringify(listing),
    });
    return { status, body: body as Product };
  }

  async search(query: Record<string, string | number>): Promise<SearchPage> {
    const params = new URLSearchParams(
      Object.entries(query).map(([key, value]): [string, string] => [key, String(value)]),
    );
    const { status, body } = await this.request(`/api/ucp/catalog/products?${params.toString()}`);
    if (status !== 200) throw new Error(`search answered ${status}: ${JSON.stringify(body)}`);
    return body as SearchPage;
  }

  /** Every product matching `q`, across pages. */
  async searchAll(q: string): Promise<Product[]> {
    const found: Product[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await this.search({ q, limit: 100, offset });
      found.push(...page.products);
      if (!page.pagination.has_more) return found;
    }
  }

  async isReady(): Promise<boolean> {
    try {
      return (await this.request('/readyz')).status === 200;
    } catch {
      return false;
    }
  }
}
