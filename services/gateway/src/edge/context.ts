import type { Router } from 'express';
import type { Logger } from '@marketplace/platform';
import type { IdentityService } from './http/auth.middleware.js';
import type { Problems } from './http/problem.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { Tool } from './mcp/tool.js';
import type { ProductViews } from './product.views.js';

/**
 * What the edge hands every context (docs/architecture.md, "Gateway"): the shared glue a context's routes and
 * tools need, built once by app.ts. A context reaches nothing else outside its own folder.
 */
export interface EdgeServices {
  readonly problems: Problems;
  /** Authenticates callers (auth.middleware.ts) and gives a buyer's contact details. */
  readonly identity: IdentityService;
  readonly views: ProductViews;
  /** Counts catalog reads, quote requests and saved searches (rate-limit.ts). */
  readonly rateLimiter: RateLimiter;
  readonly logger: Logger;
  /** `{base_url}` of links, Location headers and problem types, without a trailing slash. */
  readonly publicBaseUrl: string;
  readonly bodyLimitBytes: number;
  /** Unset: the operator API does not exist (404). */
  readonly adminToken: string | undefined;
}

/**
 * What one context adds to the gateway: its REST routers (mounted by app.ts) and its MCP tools (listed by every
 * MCP transport and document through the registry). Its route docs are a static list in its index.ts, gathered
 * into /openapi.json by discovery/openapi.routes.ts.
 */
export interface ContextSurface {
  readonly routes: readonly Router[];
  readonly tools: readonly Tool[];
}
