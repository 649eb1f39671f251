import { Router } from 'express';
import type { Response } from 'express';
import { z } from 'zod';
import { DEFAULT_CURRENCY } from '@marketplace/platform';
import { mcpManifest } from '../mcp/manifest.js';
import type { McpDispatcher } from '../mcp/dispatcher.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { Problems } from '../http/problem.js';
import type { RouteDoc } from './openapi.describe.js';
import { signedResponseHeaders } from '@marketplace/platform';
import type { SigningJwk, SigningKey } from '@marketplace/platform';
import { UCP_CAPABILITIES, UCP_SHOPPING_PATH, UCP_VERSION } from '../ucp.js';

/**
 * Discovery documents change only with a deployment: agents and crawlers may keep them for five minutes
 * (UCP requires public caching of at least 60 s).
 */
export const DISCOVERY_CACHE_CONTROL = 'public, max-age=300';

/**
 * ACP releases /.well-known/acp advertises, oldest first: the ones the checkout under `api_base_url` answers
 * (contexts/orders/acp-checkout.ts, ACP_SUPPORTED_VERSIONS).
 */
export const ACP_VERSIONS = ['2026-04-17'] as const;
/** ACP's `api_base_url`: the checkout's paths (/checkout_sessions) are under it. */
export const ACP_API_BASE_PATH = '/api/acp';

/** Sends a document serialised once at start-up. */
export const sendDocument = (
  res: Response,
  contentType: string,
  body: string,
  cacheControl: string,
): void => {
  res.status(200).type(contentType).set('Cache-Control', cacheControl).send(body);
};

/** `market.example.com` → `com.example.market`: the namespace UCP wants for our own capabilities. */
export const reverseDomainOf = (publicBaseUrl: string): string =>
  new URL(publicBaseUrl).hostname.split('.').reverse().join('.');

/** Where UCP publishes release 2026-04-08's documents (docs/protocols.md §2.1). */
const UCP_DEV = `https://ucp.dev/${UCP_VERSION}`;

/**
 * The UCP business profile (UCP overview, "Profile Structure"): our REST and MCP services and the capabilities
 * we actually serve under our own namespace, and the standard capabilities we serve in their own shapes over the
 * `dev.ucp.shopping` service in both bindings: REST at UCP_SHOPPING_PATH (checkout's `/checkout-sessions`: create,
 * get, update, complete, cancel; the catalog's `/catalog/search`, `/catalog/lookup`, `/catalog/product`) and MCP at
 * /mcp (the tools `create_checkout`, `get_checkout`, `update_checkout`, `complete_checkout`, `cancel_checkout`,
 * `search_catalog`, `lookup_catalog`, `get_product`) (docs/agents.md, "Protocols").
 */
export const ucpProfile = (publicBaseUrl: string, signingKeys: readonly SigningJwk[] = []) => {
  const namespace = reverseDomainOf(publicBaseUrl);
  const capability = (spec: string) => [
    {
      version: UCP_VERSION,
      spec: `${publicBaseUrl}/llms.txt#${spec}`,
      schema: `${publicBaseUrl}/openapi.json`,
    },
  ];
  return {
    ucp: {
      version: UCP_VERSION,
      services: {
        // The standard capabilities: over REST, /checkout-sessions and /catalog/… under the endpoint; over MCP,
        // the binding's tools on our one MCP endpoint.
        'dev.ucp.shopping': [
          {
            version: UCP_VERSION,
            spec: `${UCP_DEV}/specification/overview`,
            transport: 'rest',
            endpoint: `${publicBaseUrl}${UCP_SHOPPING_PATH}`,
            schema: `${UCP_DEV}/services/shopping/rest.openapi.json`,
          },
          {
            version: UCP_VERSION,
            spec: `${UCP_DEV}/specification/overview`,
            transport: 'mcp',
            endpoint: `${publicBaseUrl}/mcp`,
            schema: `${UCP_DEV}/services/shopping/mcp.openrpc.json`,
          },
        ],
        [`${namespace}.marketplace`]: [
          {
            version: UCP_VERSION,
            spec: `${publicBaseUrl}/llms.txt`,
            transport: 'rest',
            endpoint: `${publicBaseUrl}/api/ucp`,
            schema: `${publicBaseUrl}/openapi.json`,
          },
          {
            version: UCP_VERSION,
            spec: `${publicBaseUrl}/llms.txt`,
            transport: 'mcp',
            endpoint: `${publicBaseUrl}/mcp`,
            schema: `${publicBaseUrl}/api/mcp/schema.json`,
          },
        ],
      },
      capabilities: {
        [UCP_CAPABILITIES.checkout]: [
          {
            version: UCP_VERSION,
            spec: `${UCP_DEV}/specification/checkout`,
            schema: `${UCP_DEV}/schemas/shopping/checkout.json`,
          },
        ],
        [UCP_CAPABILITIES.catalogSearch]: [
          {
            version: UCP_VERSION,
            spec: `${UCP_DEV}/specification/catalog/search`,
            schema: `${UCP_DEV}/schemas/shopping/catalog_search.json`,
          },
        ],
        [UCP_CAPABILITIES.catalogLookup]: [
          {
            version: UCP_VERSION,
            spec: `${UCP_DEV}/specification/catalog/lookup`,
            schema: `${UCP_DEV}/schemas/shopping/catalog_lookup.json`,
          },
        ],
        [`${namespace}.marketplace.catalog`]: capability('catalog'),
        [`${namespace}.marketplace.quotes`]: capability('quotes'),
        [`${namespace}.marketplace.checkout`]: capability('checkout'),
        [`${namespace}.marketplace.saved_searches`]: capability('saved-searches'),
      },
      payment_handlers: {},
    },
    // The key whose RFC 9421 signatures our answers carry (docs/agents.md, "Signing key").
    signing_keys: signingKeys,
  };
};

/**
 * The ACP discovery document (ACP rfc.discovery; docs/protocols.md §3.3): protocol versions, the
 * base URL of the checkout service (`/checkout_sessions` under it) and transports. `rest` only: the checkout has
 * no ACP MCP binding. Nothing else: ACP's DiscoveryResponse admits no other member, so the product feed is listed
 * in /llms.txt and the service index (docs/protocols.md §3.3).
 */
export const acpDiscovery = (publicBaseUrl: string) => ({
  protocol: {
    name: 'acp',
    version: ACP_VERSIONS[ACP_VERSIONS.length - 1],
    supported_versions: ACP_VERSIONS,
    documentation_url: `${publicBaseUrl}/llms.txt`,
  },
  api_base_url: `${publicBaseUrl}${ACP_API_BASE_PATH}`,
  transports: ['rest'],
  capabilities: {
    services: ['checkout'],
    supported_currencies: [DEFAULT_CURRENCY.toLowerCase()],
    supported_locales: ['en-US'],
  },
});

/** /llms.txt (llms-txt convention): what the marketplace is and where an agent goes next. */
export const llmsTxt = (dispatcher: McpDispatcher, publicBaseUrl: string): string => {
  const tools = dispatcher.tools
    .map((tool) => `- ${tool.name} (${tool.auth === 'none' ? 'anonymous' : tool.auth}): ${tool.description}`)
    .join('\n');
  return `# Liquidation Marketplace

> B2B marketplace for surplus, overstock and customer-return lots. Buyers search, request bulk quotes and buy;
> sellers publish and maintain listings. Readable anonymously; prices are integer cents (USD).

Agents use the MCP endpoint (Streamable HTTP, JSON responses; stateless, or a session opened by an
authenticated initialize, in which saved-search resources can be subscribed to) or the REST API. Seller tools need
the seller's X-MCP-API-Key header; buyer order tools need the buyer's key or an X-Agent-Token.

## Agent endpoints

- [MCP endpoint](${publicBaseUrl}/mcp): POST JSON-RPC 2.0, protocol 2025-11-25
- [Tool manifest](${publicBaseUrl}/api/mcp/schema.json): every tool with input and output JSON Schemas
- [JSON-RPC endpoint](${publicBaseUrl}/api/mcp/streamable): one JSON-RPC request per POST
- [Tool invoke](${publicBaseUrl}/api/mcp/invoke): POST {tool, parameters}; [SSE variant](${publicBaseUrl}/api/mcp/stream)

## Tools

${tools}

## Catalog

- [Agent sitemap](${publicBaseUrl}/agents/sitemap.xml): every public lot with its markdown page
- [Product feed](${publicBaseUrl}/acp/feed.json): public lots, cursor pages of up to 200
- [Categories](${publicBaseUrl}/api/ucp/catalog/categories)

## Specifications

- [OpenAPI 3.1](${publicBaseUrl}/openapi.json): the REST API
- [AsyncAPI 3.0](${publicBaseUrl}/asyncapi.json): the event stream for analytics consumers
- [UCP profile](${publicBaseUrl}/.well-known/ucp)
- [ACP discovery](${publicBaseUrl}/.well-known/acp.json)
`;
};

/** The tool manifest, the commerce-protocol profiles and llms.txt (docs/specification.md, "Service", 4.3), built once. */
export const discoveryRoutes = (
  problems: Problems,
  dispatcher: McpDispatcher,
  publicBaseUrl: string,
  signingKey: SigningKey,
): Router => {
  const router = Router();
  // Signed per answer: `created` tells a verifier how fresh the signature is (docs/agents.md, "Signing key").
  const signedJson = (document: unknown) => {
    const body = JSON.stringify(document);
    // The Content-Type exactly as sent (Express adds the charset to a string body), since the signature covers it.
    const contentType = 'application/json; charset=utf-8';
    return (_req: unknown, res: Response) => {
      const created = Math.floor(Date.now() / 1000);
      res.set(signedResponseHeaders(signingKey, { status: 200, contentType, body }, created));
      sendDocument(res, contentType, body, DISCOVERY_CACHE_CONTROL);
    };
  };
  const json = (document: unknown) => {
    const body = JSON.stringify(document);
    return (_req: unknown, res: Response) =>
      sendDocument(res, 'application/json', body, DISCOVERY_CACHE_CONTROL);
  };
  const documents: [string, (req: unknown, res: Response) => void][] = [
    ['/api/mcp/schema.json', json(mcpManifest(dispatcher, publicBaseUrl))],
    ['/.well-known/ucp', signedJson(ucpProfile(publicBaseUrl, [signingKey.jwk]))],
    ['/.well-known/acp', json(acpDiscovery(publicBaseUrl))],
    ['/.well-known/acp.json', json(acpDiscovery(publicBaseUrl))],
  ];
  const llms = llmsTxt(dispatcher, publicBaseUrl);
  documents.push([
    '/llms.txt',
    (_req, res) => sendDocument(res, 'text/markdown; charset=utf-8', llms, DISCOVERY_CACHE_CONTROL),
  ]);
  for (const [path, handler] of documents) {
    router
      .route(path)
      .get(handler)
      .all(methodNotAllowed(problems, ['GET']));
  }
  return router;
};

const looseDocument = (description: string) => z.looseObject({}).describe(description);

export const discoveryRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/api/mcp/schema.json',
    operationId: 'getToolManifest',
    summary: 'The MCP tool manifest',
    description:
      'schema_version 1.0: tools with input and output JSON Schemas, auth and annotations; resources; transports.',
    tags: ['discovery'],
    auth: 'none',
    responses: {
      200: {
        description: 'The manifest',
        schema: z.looseObject({
          schema_version: z.literal('1.0'),
          tools: z.array(
            z.looseObject({
              name: z.string(),
              description: z.string(),
              input_schema: z.looseObject({}),
              output_schema: z.looseObject({}),
              auth: z.enum(['none', 'buyer', 'seller']),
            }),
          ),
          resources: z.array(z.looseObject({ name: z.string() })),
          transports: z.looseObject({}),
        }),
      },
    },
  },
  {
    method: 'get',
    path: '/.well-known/ucp',
    operationId: 'getUcpProfile',
    summary: 'The UCP business profile',
    tags: ['discovery'],
    auth: 'none',
    responses: { 200: { description: 'The profile', schema: looseDocument('UCP business profile') } },
  },
  {
    method: 'get',
    path: '/.well-known/acp',
    operationId: 'getAcpDiscovery',
    summary: 'The ACP discovery document',
    tags: ['discovery'],
    auth: 'none',
    responses: { 200: { description: 'The document', schema: looseDocument('ACP discovery document') } },
  },
  {
    method: 'get',
    path: '/.well-known/acp.json',
    operationId: 'getAcpDiscoveryJson',
    summary: 'The ACP discovery document (same as /.well-known/acp)',
    tags: ['discovery'],
    auth: 'none',
    responses: { 200: { description: 'The document', schema: looseDocument('ACP discovery document') } },
  },
  {
    method: 'get',
    path: '/llms.txt',
    operationId: 'getLlmsTxt',
    summary: 'What the marketplace is and where agents go next (llms.txt, markdown)',
    tags: ['discovery'],
    auth: 'none',
    responses: { 200: { description: 'Markdown', contentType: 'text/markdown', text: true } },
  },
];
