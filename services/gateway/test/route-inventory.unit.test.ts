import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@marketplace/platform';
import { createGatewayApp, type GatewayDependencies } from '../src/edge/app.js';
import { ROUTE_DOCS } from '../src/edge/discovery/openapi.routes.js';

/** The part of an Express 5 layer this test reads: a route's path and methods, or a mounted router's stack. */
interface Layer {
  readonly route?: { readonly path: string; readonly methods: Record<string, boolean> };
  readonly handle?: { readonly stack?: readonly Layer[] };
}

/**
 * Served on purpose but not in /openapi.json, each with its reason. Anything else the app serves must be
 * documented, and everything documented must be served.
 */
const UNDOCUMENTED_ON_PURPOSE: Readonly<Record<string, string>> = {
  'GET /healthz': 'liveness probe for the orchestrator, not part of the API',
  'GET /readyz': 'readiness probe for the orchestrator, not part of the API',
  'GET /problems/{slug}': 'the human-readable page behind every problem document’s `type` URI',
  'GET /images/{name}': 'the bytes of re-hosted listing images, linked from product documents',
  'POST /api/admin/accounts': 'operator API (services/gateway/README.md), absent without ADMIN_TOKEN',
  'POST /api/admin/accounts/{accountId}/api-keys': 'operator API, absent without ADMIN_TOKEN',
  'DELETE /api/admin/api-keys/{prefix}': 'operator API, absent without ADMIN_TOKEN',
  'GET /api/admin/disputes': 'operator API (docs/specification.md, "Disputes"), absent without ADMIN_TOKEN',
  'POST /api/admin/disputes/{id}/resolve': 'operator API, absent without ADMIN_TOKEN',
};

/** Express paths whose OpenAPI form is not a plain `:name` → `{name}`: one segment the handler parses itself. */
const DOCUMENTED_AS: Readonly<Record<string, string>> = {
  '/agents/products/:file': '/agents/products/{productId}.md',
};

const openApiPathOf = (expressPath: string): string =>
  DOCUMENTED_AS[expressPath] ?? expressPath.replace(/:(\w+)/g, '{$1}');

/** `METHOD /path` of every route the app's routers register (`.all()` handlers answer 405 and OPTIONS). */
const servedOperations = (stack: readonly Layer[]): string[] =>
  stack.flatMap((layer) =>
    layer.route
      ? Object.keys(layer.route.methods)
          .filter((method) => method !== '_all')
          .map((method) => `${method.toUpperCase()} ${openApiPathOf(layer.route!.path)}`)
      : servedOperations(layer.handle?.stack ?? []),
  );

/** The admin token set, so that every router is mounted; building the app calls no backend. */
const unused = {} as never;
const fullGateway = (): GatewayDependencies => ({
  identity: unused,
  listing: unused,
  catalog: unused,
  subscription: unused,
  order: unused,
  quote: unused,
  images: unused,
  logger: createLogger({ service: 'route-inventory-test', level: 'silent' }),
  publicBaseUrl: 'https://market.example',
  adminToken: 'route-inventory-admin-token',
  readiness: async () => ({ ready: true, failing: [] }),
});

describe('route inventory (OWASP API9)', () => {
  const app = createGatewayApp(fullGateway());
  const served = servedOperations((app.router as unknown as { stack: Layer[] }).stack);
  const documented = ROUTE_DOCS.map((doc) => `${doc.method.toUpperCase()} ${doc.path}`);

  it('finds the routes of every router', () => {
    expect(served.length).toBeGreaterThan(40);
    expect(served).toEqual(expect.arrayContaining(['POST /api/products', 'GET /api/orders/{id}']));
  });

  it('documents every operation the gateway serves in /openapi.json, and nothing it does not serve', () => {
    const undocumented = served.filter(
      (operation) => !documented.includes(operation) && !(operation in UNDOCUMENTED_ON_PURPOSE),
    );
    const notServed = documented.filter((operation) => !served.includes(operation));
    expect({ undocumented, notServed }).toEqual({ undocumented: [], notServed: [] });
  });

  it('keeps the list of deliberate exceptions honest: each is served and none is documented', () => {
    for (const operation of Object.keys(UNDOCUMENTED_ON_PURPOSE)) {
      expect({
        operation,
        served: served.includes(operation),
        documented: documented.includes(operation),
      }).toEqual({ operation, served: true, documented: false });
    }
  });
});
