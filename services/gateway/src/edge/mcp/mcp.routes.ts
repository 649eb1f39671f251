import { Router } from 'express';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { Logger } from '@marketplace/platform';
import { validationError } from '@marketplace/platform';
import type { IdentityService } from '../../contexts/identity/identity.service.js';
import { authenticate, principalOf } from '../http/auth.middleware.js';
import { idempotencyKeyOf } from '../http/idempotency-key.js';
import { errorHandler } from '../http/error-handler.js';
import { jsonBody } from '../http/json-body.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { Problems } from '../http/problem.js';
import { sendProblem } from '../http/problem.js';
import { parseOrThrow } from '../schemas/validate.js';
import type { McpDispatcher } from './dispatcher.js';
import type { RouteDoc } from '../discovery/openapi.describe.js';
import { answerJsonRpc, batchRefusal, jsonRpcEnvelopeSchema } from './json-rpc.js';
import { JSON_RPC, jsonRpcErrorResponse } from './json-rpc-error.js';
import { originGuard } from './origin-guard.js';
import type { McpSessions } from './mcp-sessions.js';
import { sdkStreamableHttp } from './sdk-transport.js';

/**
 * Request bodies on the MCP routes: a bulk call carries at most 200 ids plus a few short strings (a few KB),
 * a create_listing at most ~60 KB of escaped text; 1 MiB leaves room without inviting abuse.
 */
export const MCP_BODY_LIMIT_BYTES = 1024 * 1024;

/** Body of /api/mcp/invoke and /api/mcp/stream (docs/specification.md, "MCP tools"). */
export const invokeBodySchema = z.object({
  tool: z.string({ error: 'must be a string naming a tool' }).min(1, 'must name a tool'),
  parameters: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
});

export interface McpRoutesDependencies {
  readonly dispatcher: McpDispatcher;
  readonly identity: IdentityService;
  readonly problems: Problems;
  readonly logger: Logger;
  readonly publicBaseUrl: string;
  /** A reverse proxy is declared (TRUST_PROXY_HOPS > 0): its X-Forwarded-Host counts for the Host check. */
  readonly behindProxy?: boolean;
  /** Applied on every MCP route after authentication, so a key's allowance counts on all transports alike. */
  readonly rateLimit?: RequestHandler;
  /**
   * The MCP sessions of this replica (docs/agents.md, "MCP resource subscriptions"); absent: /mcp is stateless
   * only, and GET and DELETE answer 405.
   */
  readonly sessions?: McpSessions | undefined;
}

/**
 * The four MCP transports (docs/specification.md, "Transports"): one dispatcher, one authentication (X-MCP-API-Key or
 * X-Agent-Token, optional here: each tool's `auth` decides), one rate limiter, one Origin/Host guard.
 */
export const mcpRoutes = (deps: McpRoutesDependencies): Router => {
  const { dispatcher, problems } = deps;
  const router = Router();
  const rest = [
    authenticate(deps.identity, { required: false }),
    ...(deps.rateLimit ? [deps.rateLimit] : []),
  ];
  const guardOptions = { behindProxy: deps.behindProxy ?? false };
  const front: RequestHandler[] = [originGuard(deps.publicBaseUrl, undefined, guardOptions), ...rest];
  // /api/mcp/invoke and /api/mcp/stream are REST: a refusal there is a problem document.
  const restFront: RequestHandler[] = [
    originGuard(
      deps.publicBaseUrl,
      (res, message) => sendProblem(res, problems.of('forbidden', message)),
      guardOptions,
    ),
    ...rest,
  ];
  const jsonRpcErrors = jsonRpcErrorHandler(problems, deps.logger);
  // The dispatcher checks the text of a tool's arguments, so that each transport answers as for any invalid
  // argument; the body's depth is capped here.
  const mcpJsonBody = jsonBody(MCP_BODY_LIMIT_BYTES, { checkText: false });

  const sdk = sdkStreamableHttp(dispatcher, deps.logger, deps.sessions);
  router
    .route('/mcp')
    .post(...front, ...mcpJsonBody, refuseBatches, sdk.post)
    // A session's stream and its end; without an Mcp-Session-Id the exchange is stateless: 405 (MCP transports,
    // 2025-11-25).
    .get(...front, sdk.get(statelessMethodNotAllowed))
    .delete(...front, sdk.delete(statelessMethodNotAllowed))
    .all(statelessMethodNotAllowed);
  router.use('/mcp', jsonRpcErrors);

  router
    .route('/api/mcp/streamable')
    .post(...front, ...mcpJsonBody, async (req, res) => {
      const reply = await answerJsonRpc(dispatcher, principalOf(req), req.body);
      if (reply.body === undefined) res.status(reply.status).end();
      else res.status(reply.status).json(reply.body);
    })
    .all(methodNotAllowed(problems, ['POST']));
  router.use('/api/mcp/streamable', jsonRpcErrors);

  /** The Idempotency-Key header is the idempotency_key parameter of a tool that takes one; others ignore it. */
  const withIdempotencyKeyHeader = (
    req: Request,
    res: Response,
    tool: string,
    parameters: Record<string, unknown> | undefined,
  ) => {
    const key = dispatcher.takesIdempotencyKey(tool) ? idempotencyKeyOf(req, res) : undefined;
    if (key === undefined) return parameters;
    const sent = parameters?.['idempotency_key'];
    if (sent !== undefined && sent !== key) {
      throw validationError('the Idempotency-Key header and parameters/idempotency_key differ', [
        { path: 'Idempotency-Key', message: 'must equal parameters/idempotency_key when both are sent' },
      ]);
    }
    return { ...parameters, idempotency_key: key };
  };
  const invoke = async (req: Request, res: Response) => {
    const { tool, parameters } = parseOrThrow(invokeBodySchema, req.body, 'tool invocation');
    return dispatcher.invoke(principalOf(req), tool, withIdempotencyKeyHeader(req, res, tool, parameters), {
      argumentsPath: 'parameters',
    });
  };
  router
    .route('/api/mcp/invoke')
    .post(...restFront, ...mcpJsonBody, async (req, res) => {
      res.json(await invoke(req, res));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/mcp/stream')
    .post(...restFront, ...mcpJsonBody, async (req, res) => {
      // The tool runs before the first byte: a failure is the same problem document as on /api/mcp/invoke.
      const result = await invoke(req, res);
      res
        .status(200)
        .set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store' })
        .flushHeaders();
      res.write(`event: message\ndata: ${JSON.stringify(result)}\n\n`);
      res.end('event: done\ndata: {}\n\n');
    })
    .all(methodNotAllowed(problems, ['POST']));
  return router;
};

/**
 * /mcp refuses JSON-RPC batches as /api/mcp/streamable does (one request per POST), before the SDK, which would
 * run every entry of a batch under one count of the rate limiter.
 */
const refuseBatches: RequestHandler = (req, res, next) => {
  if (!Array.isArray(req.body)) {
    next();
    return;
  }
  const refusal = batchRefusal();
  res.status(refusal.status).json(refusal.body);
};

/**
 * OPTIONS lists what the path serves (GET and DELETE with a session); any other method, or GET and DELETE without
 * an Mcp-Session-Id, is a 405 whose Allow lists what that request could have been: POST.
 */
const statelessMethodNotAllowed: RequestHandler = (req, res) => {
  if (req.method === 'OPTIONS') {
    res.set('Allow', 'GET, DELETE, POST, OPTIONS').status(204).end();
    return;
  }
  res.set('Allow', 'POST, OPTIONS');
  res
    .status(405)
    .json(
      jsonRpcErrorResponse(
        null,
        JSON_RPC.serverError,
        `Method not allowed: ${req.method} without an Mcp-Session-Id. Without a session this MCP endpoint is ` +
          'stateless and takes POST only; initialize with a credential to open a session.',
      ),
    );
};

/**
 * Failures before the dispatcher on the JSON-RPC routes (malformed JSON, an invalid credential, a rate limit,
 * an oversized body) answer as JSON-RPC errors with the HTTP status of the equivalent problem document, which
 * rides along in `data`.
 */
const jsonRpcErrorHandler = (problems: Problems, logger: Logger): ErrorRequestHandler =>
  errorHandler(problems, logger, {
    problem: (res, problem) => {
      const code = problem.type.endsWith('/malformed-json') ? JSON_RPC.parseError : JSON_RPC.serverError;
      res
        .status(problem.status)
        .json(jsonRpcErrorResponse(null, code, problem.detail ?? problem.title, problem));
    },
    fault: (_req, res) => {
      res.status(500).json(jsonRpcErrorResponse(null, JSON_RPC.internalError, 'Internal error'));
    },
  });

const jsonRpcResponseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number().int(), z.null()]),
  result: z.looseObject({}).optional(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});
const toolResultSchema = z
  .looseObject({})
  .describe("The tool's result; its schema is the tool's output_schema in /api/mcp/schema.json");

/** The JSON-RPC transports answer a refusal of the rate limiter as a JSON-RPC error, like their other errors. */
const RATE_LIMITED_JSON_RPC = {
  description: 'Rate limit reached (a JSON-RPC error); retry after Retry-After seconds',
  schema: jsonRpcResponseSchema,
  contentType: 'application/json',
};

/**
 * Refusals of a tool that ran into the marketplace's state on /api/mcp/invoke and /api/mcp/stream (both answer a
 * failure as a problem document before any result): the conflicts of the tools that change something, and the
 * services behind them being unavailable. quick_buy gives both (docs/idempotency.md).
 */
const TOOL_STATE_ERRORS = {
  409:
    'The tool conflicts with the current state: quick_buy finds too little stock, a listing without instant ' +
    'checkout or a line over the bulk threshold (use request_quote); an order or quote is not in the state the ' +
    'change needs',
  412:
    'expected_version is not the listing’s current version (update_listing, withdraw_listing): ' +
    'somebody changed it since; read it again',
  503:
    'A service behind the gateway, or its database connection, is not available; retry after Retry-After. The ' +
    'outcome of a write is then unknown: repeat a create with the same idempotency_key (quick_buy answers the ' +
    'order it may have placed)',
};

export const mcpRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/mcp',
    operationId: 'mcpStreamableHttp',
    summary:
      'MCP Streamable HTTP endpoint (JSON responses; stateless, or a session for resource subscriptions)',
    description:
      'Protocol 2025-11-25 and the earlier revisions of the official SDK. Send Accept: application/json, ' +
      'text/event-stream. An initialize with X-MCP-API-Key or X-Agent-Token opens a session (Mcp-Session-Id ' +
      'header), whose GET stream carries notifications/resources/updated of subscribed saved searches; ' +
      'anonymous callers and requests without Mcp-Session-Id are stateless. Tools: /api/mcp/schema.json.',
    tags: ['mcp'],
    auth: 'api_key_or_agent_token_optional',
    body: jsonRpcEnvelopeSchema,
    responses: {
      200: { description: 'One JSON-RPC response', schema: jsonRpcResponseSchema },
      202: { description: 'A notification was accepted' },
      400: {
        description: 'Malformed JSON-RPC, or a batch (-32600: one JSON-RPC request per POST)',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      401: {
        description: 'Invalid credential (a JSON-RPC error carrying the problem document in `data`)',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      429: RATE_LIMITED_JSON_RPC,
      403: {
        description: 'Origin or Host refused',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      406: {
        description: 'Accept lacks a media type',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      404: {
        description:
          'Mcp-Session-Id names no session of this replica for this credential (-32001): initialize again',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
    },
  },
  {
    method: 'get',
    path: '/mcp',
    operationId: 'mcpSessionStream',
    summary: "Open an MCP session's stream of server notifications (SSE)",
    description:
      'With the Mcp-Session-Id an initialize answered and the same credential: an SSE stream carrying ' +
      'notifications/resources/updated for the saved searches the session subscribed to (one stream per ' +
      'session). Without Mcp-Session-Id: 405, the endpoint being stateless.',
    tags: ['mcp'],
    auth: 'api_key_or_agent_token_optional',
    responses: {
      200: { description: 'The session stream', contentType: 'text/event-stream', text: true },
      401: {
        description: 'Invalid credential (a JSON-RPC error carrying the problem document in `data`)',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      404: {
        description: 'No such session for this credential on this replica (-32001): initialize again',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      405: {
        description: 'No Mcp-Session-Id: stateless, POST only',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      409: {
        description: 'The session already has an open stream',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
    },
  },
  {
    method: 'delete',
    path: '/mcp',
    operationId: 'mcpEndSession',
    summary: 'End an MCP session',
    description: 'With its Mcp-Session-Id and credential; its stream closes and its subscriptions end.',
    tags: ['mcp'],
    auth: 'api_key_or_agent_token_optional',
    responses: {
      200: 'The session ended',
      401: {
        description: 'Invalid credential (a JSON-RPC error carrying the problem document in `data`)',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      404: {
        description: 'No such session for this credential on this replica (-32001)',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      405: {
        description: 'No Mcp-Session-Id: stateless, POST only',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
    },
  },
  {
    method: 'post',
    path: '/api/mcp/streamable',
    operationId: 'mcpStreamable',
    summary: 'JSON-RPC 2.0 MCP endpoint: one request, one JSON response',
    description:
      'Methods initialize, tools/list, tools/call, resources/list, resources/templates/list, resources/read, ping.',
    tags: ['mcp'],
    auth: 'api_key_or_agent_token_optional',
    body: jsonRpcEnvelopeSchema,
    responses: {
      200: { description: 'A JSON-RPC response (result or error)', schema: jsonRpcResponseSchema },
      202: { description: 'A notification was accepted' },
      400: {
        description:
          'Malformed envelope or a batch (-32600), malformed JSON (-32700) or unknown method (-32601)',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      401: {
        description: 'Invalid credential',
        schema: jsonRpcResponseSchema,
        contentType: 'application/json',
      },
      429: RATE_LIMITED_JSON_RPC,
    },
  },
  {
    method: 'post',
    path: '/api/mcp/invoke',
    operationId: 'invokeMcpTool',
    summary: 'Invoke one tool and answer its result as JSON',
    description:
      'An Idempotency-Key header counts as the idempotency_key parameter of the tools that create (create_listing, ' +
      'request_quote, quick_buy); other tools ignore it.',
    tags: ['mcp'],
    auth: 'api_key_or_agent_token_optional',
    rateLimited: true,
    idempotencyKey: true,
    body: invokeBodySchema,
    responses: {
      200: { description: 'The tool ran', schema: toolResultSchema },
      400: 'Unknown tool or invalid parameters (errors name tool or parameters/<name>)',
      401: 'The tool needs a credential',
      403: 'The credential may not use this tool',
      404: 'The tool found nothing with this id',
      ...TOOL_STATE_ERRORS,
    },
  },
  {
    method: 'post',
    path: '/api/mcp/stream',
    operationId: 'streamMcpTool',
    summary: 'Invoke one tool; the result arrives as an SSE event named message, then an event named done',
    description: 'An Idempotency-Key header is taken as on /api/mcp/invoke.',
    tags: ['mcp'],
    auth: 'api_key_or_agent_token_optional',
    rateLimited: true,
    idempotencyKey: true,
    body: invokeBodySchema,
    responses: {
      200: {
        description: 'event: message (the result as JSON), then event: done',
        contentType: 'text/event-stream',
        text: true,
      },
      400: 'Unknown tool or invalid parameters',
      401: 'The tool needs a credential',
      403: 'The credential may not use this tool',
      404: 'The tool found nothing with this id',
      ...TOOL_STATE_ERRORS,
    },
  },
];
