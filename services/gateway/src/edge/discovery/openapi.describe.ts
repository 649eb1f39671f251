import { z } from 'zod';

/** Who may call a route: the security requirements of its OpenAPI operation. */
export type RouteAuth =
  /** Anonymous. */
  | 'none'
  /** X-MCP-API-Key optional (identifies the caller when sent). */
  | 'api_key_optional'
  /** X-MCP-API-Key required. */
  | 'api_key'
  /** X-MCP-API-Key or X-Agent-Token, optional (the tool or operation decides). */
  | 'api_key_or_agent_token_optional'
  /** X-MCP-API-Key or X-Agent-Token required. */
  | 'api_key_or_agent_token'
  /** Authorization: Bearer ADMIN_TOKEN. */
  | 'admin';

export interface ResponseDoc {
  readonly description: string;
  /** The body's schema; omitted for bodiless answers (204, 202). */
  readonly schema?: z.ZodType;
  /** Default `application/json`; problem answers use `problem` (RFC 9457). */
  readonly contentType?: string;
  /** A non-JSON body (text/markdown, application/xml, text/event-stream): described in words only. */
  readonly text?: boolean;
}

/**
 * One REST operation, as /openapi.json describes it. Each routes file exports a `<name>RouteDocs` list next to
 * its router, built from the very zod schemas its handlers parse with; its context's index.ts lists it in
 * `routeDocs`, and openapi.routes.ts gathers every context's: adding a route means adding its doc to its file's
 * list (and a new file's list, once, to its context's `routeDocs`).
 */
export interface RouteDoc {
  readonly method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI path, `{name}` for path parameters. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly auth: RouteAuth;
  /** Counted by the gateway's rate limiter: the operation can answer 429 (documented once, in openapi.document). */
  readonly rateLimited?: true;
  /**
   * Takes an Idempotency-Key header (docs/idempotency.md): the header, its echo on success and the 422
   * idempotency conflict are documented once, in openapi.document. `required`: a POST without one is a 400 (ACP).
   */
  readonly idempotencyKey?: true | 'required';
  /** Path parameters: an object schema whose keys are the `{name}`s of the path. */
  readonly pathParameters?: z.ZodObject;
  /** Query parameters: an object schema (strings in, as Express hands them). */
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** A body that is a file, not JSON: the media types it may have (POST /api/products/imports). */
  readonly fileBody?: readonly string[];
  /** Keyed by status; the 4xx/5xx problem answers the route can give need only a description. */
  readonly responses: Readonly<Record<number, ResponseDoc | string>>;
}

/**
 * Realistic examples of one operation (openapi.examples.ts, keyed by operationId): published as the `examples`
 * of its request body and of its successful answers. Problem answers get one built from their description.
 */
export interface OperationExamples {
  /** The request body, where the operation takes one. */
  readonly body?: unknown;
  /** Keyed by status: each successful answer that has a body. */
  readonly responses: Readonly<Record<number, unknown>>;
}

/** RFC 9457 problem details, the body of every 4xx and 5xx answer (components.schemas.Problem). */
export const problemSchema = z.object({
  type: z.string().describe('URI of the problem type; resolves to its description'),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  code: z
    .string()
    .optional()
    .describe('a stable code where a protocol names one: idempotency_conflict (422)'),
  errors: z
    .array(z.object({ path: z.string(), message: z.string() }))
    .optional()
    .describe('validation failures, one per offending field or parameter'),
});
