/**
 * What the UCP translations (contexts/orders/ucp-checkout.ts, contexts/catalog/ucp-catalog.ts) and the profile at
 * /.well-known/ucp share: the release they follow, the capability names and where the REST service lives
 * (docs/protocols.md §2.1-2.4; docs/agents.md, "Protocols").
 */

/** The UCP release the profile and every UCP answer follow. */
export const UCP_VERSION = '2026-04-08';

/**
 * The `dev.ucp.shopping` REST service's endpoint: the bindings' paths (`/checkout-sessions`, `/catalog/search`, …)
 * sit under it. Not `/api/ucp` itself, where `POST /api/ucp/catalog/search` is our own semantic search
 * (docs/specification.md, "Catalog endpoints"; the decision is in docs/agents.md, "Protocols").
 */
export const UCP_SHOPPING_PATH = '/api/ucp/shopping';

export const UCP_CAPABILITIES = {
  checkout: 'dev.ucp.shopping.checkout',
  catalogSearch: 'dev.ucp.shopping.catalog.search',
  catalogLookup: 'dev.ucp.shopping.catalog.lookup',
} as const;
export type UcpCapability = (typeof UCP_CAPABILITIES)[keyof typeof UCP_CAPABILITIES];

/**
 * The `ucp` member every catalog answer carries (docs/protocols.md §2.2): the version and the capability that
 * answered; `status: "error"` on an application failure answered with 200 (a product not found).
 */
export const ucpCatalogMetadata = (capability: UcpCapability, status?: 'error') => ({
  version: UCP_VERSION,
  ...(status === undefined ? {} : { status }),
  capabilities: { [capability]: [{ version: UCP_VERSION }] },
});
