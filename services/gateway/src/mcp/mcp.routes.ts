import { Router } from 'express';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { z } from 'zod';
import type { Logger } from '@marketplace/platform';
import type { IdentityService } from '../application/identity.service.js';
import { authenticateApiKey, principalOf } from '../http/auth.middleware.js';
import { jsonBody } from '../http/json-body.js';
import { methodNotAllowed } from '../http/method-not-allowed.js';
import type { Problems } from '../http/problem.js';
import { requestIdOf } from '../http/request-log.js';
import { parseOrThrow } from '../http/schemas/validate.js';
import type { McpDispatcher } from './dispatcher.js';
import { answerJsonRpc } from './json-rpc.js';
import { JSON_RPC, jsonRpcErrorResponse } from './json-rpc-error.js';
import { originGuard } from './origin-guard.js';
import { sdkStreamableHttp } from './sdk-transport.js';

/**
 * Request bodies on the MCP routes: a bulk call carries at most 200 ids plus a few short strings (a few KB),
 * a create_listing at most ~60 KB of escaped text; 1 MiB leaves room without inviting abuse.
 */
export const MCP_BODY_LIMIT_BYTES = 1024 * 1024;

/** Body of /api/mcp/invoke and /api/mcp/stream (spec 4.3). */
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
  /** Applied on every MCP route after authentication, so a key's allowance counts on all transports alike. */
  readonly rateLimit?: RequestHandler;
}

/**
 * The four MCP transports (decisions, "Transports"): one dispatcher, one authentication (X-MCP-API-Key or
 * X-Agent-Token, optional here: each tool's `auth` decides), one rate limiter, one Origin/Host guard.
 */
export const mcpRoutes = (deps: McpRoutesDependencies): Router => {
  const { dispatcher, problems } = deps;
  const router = Router();
  const front: RequestHandler[] = [
    originGuard(deps.publicBaseUrl),
    authenticateApiKey(deps.identity, { required: false }),
    ...(deps.rateLimit ? [deps.rateLimit] : []),
  ];
  const jsonRpcErrors = jsonRpcErrorHandler(problems, deps.logger);

  router
    .route('/mcp')
    .post(...front, ...jsonBody(MCP_BODY_LIMIT_BYTES), sdkStreamableHttp(dispatcher, deps.logger))
    // Stateless: no server-initiated stream to GET, no session to DELETE (MCP transports, 2025-11-25).
    .all(statelessMethodNotAllowed);
  router.use('/mcp', jsonRpcErrors);

  router
    .route('/api/mcp/streamable')
    .post(...front, ...jsonBody(MCP_BODY_LIMIT_BYTES), async (req, res) => {
      const reply = await answerJsonRpc(dispatcher, principalOf(req), req.body);
      if (reply.body === undefined) res.status(reply.status).end();
      else res.status(reply.status).json(reply.body);
    })
    .all(methodNotAllowed(problems, ['POST']));
  router.use('/api/mcp/streamable', jsonRpcErrors);

  const invoke = async (body: unknown, principal: ReturnType<typeof principalOf>) => {
    const { tool, parameters } = parseOrThrow(invokeBodySchema, body, 'tool invocation');
    return dispatcher.invoke(principal, tool, parameters, { argumentsPath: 'parameters' });
  };
  router
    .route('/api/mcp/invoke')
    .post(...front, ...jsonBody(MCP_BODY_LIMIT_BYTES), async (req, res) => {
      res.json(await invoke(req.body, principalOf(req)));
    })
    .all(methodNotAllowed(problems, ['POST']));
  router
    .route('/api/mcp/stream')
    .post(...front, ...jsonBody(MCP_BODY_LIMIT_BYTES), async (req, res) => {
      // The tool runs before the first byte: a failure is the same problem document as on /api/mcp/invoke.
      const result = await invoke(req.body, principalOf(req));
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

const statelessMethodNotAllowed: RequestHandler = (req, res) => {
  res.set('Allow', 'POST, OPTIONS');
  if (req.method === 'OPTIONS') {
    res.status(204).end();
    return;
  }
  res
    .status(405)
    .json(
      jsonRpcErrorResponse(
        null,
        JSON_RPC.serverError,
        `Method not allowed: ${req.method}. This stateless MCP endpoint takes POST only.`,
      ),
    );
};

/**
 * Failures before the dispatcher on the JSON-RPC routes (malformed JSON, an invalid credential, a rate limit,
 * an oversized body) answer as JSON-RPC errors with the HTTP status of the equivalent problem document, which
 * rides along in `data`.
 */
const jsonRpcErrorHandler =
  (problems: Problems, logger: Logger): ErrorRequestHandler =>
  (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const problem = problems.fromError(error);
    if (!problem) {
      logger.error({ err: error, requestId: requestIdOf(req) }, 'unexpected error on an MCP route');
      res.status(500).json(jsonRpcErrorResponse(null, JSON_RPC.internalError, 'Internal error'));
      return;
    }
    const code = problem.type.endsWith('/malformed-json') ? JSON_RPC.parseError : JSON_RPC.serverError;
    res
      .status(problem.status)
      .json(jsonRpcErrorResponse(null, code, problem.detail ?? problem.title, problem));
  };
