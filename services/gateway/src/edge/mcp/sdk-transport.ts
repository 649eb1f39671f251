import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '@marketplace/platform';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { Principal } from '../account.js';
import { principalOf } from '../http/auth.middleware.js';
import { requestIdOf } from '../http/request-log.js';
import type { McpDispatcher } from './dispatcher.js';
import { invalidParamsReply } from './json-rpc.js';
import { JSON_RPC, JsonRpcError, jsonRpcErrorResponse } from './json-rpc-error.js';
import { listResources, listResourceTemplates, listTools } from './listings.js';
import { setLogLevel } from './logging.js';
import { getPrompt, listPrompts } from './prompts.js';
import type { McpSessions, SessionHandle } from './mcp-sessions.js';
import { SubscriptionLimitError } from './mcp-sessions.js';
import {
  MCP_CAPABILITIES,
  MCP_INSTRUCTIONS,
  MCP_SERVER_INFO,
  MCP_SESSION_CAPABILITIES,
} from './server-info.js';

/** JSON-RPC code the SDK answers an unknown or expired session with (HTTP 404: the client initializes again). */
const SESSION_NOT_FOUND = -32001;

const NO_SESSION =
  'resources/subscribe and resources/unsubscribe need an MCP session: initialize on POST /mcp with an ' +
  'X-MCP-API-Key or X-Agent-Token, send the Mcp-Session-Id it answers on every request, and open the GET ' +
  'stream the notifications arrive on. This stateless exchange advertised resources.subscribe false.';

/** One MCP session: its SDK transport (which holds the GET stream) and server. */
class SdkSession implements SessionHandle {
  constructor(
    readonly transport: StreamableHTTPServerTransport,
    private readonly server: Server,
    private readonly logger: Logger,
  ) {}

  notifyUpdated(uri: string): void {
    this.server.sendResourceUpdated({ uri }).catch((error: unknown) => {
      this.logger.warn({ err: error, uri }, 'notifications/resources/updated was not sent');
    });
  }

  close(): void {
    void this.transport.close();
    void this.server.close();
  }
}

/** POST, GET and DELETE of /mcp. */
export interface SdkStreamableHttp {
  readonly post: RequestHandler;
  /** Opens a session's stream; without an Mcp-Session-Id, `refuse` answers (405). */
  readonly get: (refuse: RequestHandler) => RequestHandler;
  /** Ends a session; without an Mcp-Session-Id, `refuse` answers (405). */
  readonly delete: (refuse: RequestHandler) => RequestHandler;
}

const isInitialize = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';

/**
 * /mcp: MCP Streamable HTTP through the official SDK, answering plain JSON, in two modes (docs/agents.md, "MCP
 * resource subscriptions"):
 *
 * - stateless, as the SDK's stateless example: a request without Mcp-Session-Id gets a fresh SDK `Server` bound to
 *   the caller, and nothing is kept; `initialize` from an anonymous caller answers so (resources.subscribe false);
 * - a session, when `sessions` is given and an authenticated caller (API key or agent token) sends `initialize`
 *   without Mcp-Session-Id: the SDK mints the id, its transport and server live in `sessions` (this replica's
 *   memory), its GET opens the stream `notifications/resources/updated` travel on, and `resources/subscribe`
 *   works. Requests naming a session must carry its credential; an unknown, expired or other credential's
 *   session is 404 (-32001), upon which the SDK client initializes again.
 *
 * The handlers only call the shared dispatcher. The SDK checks Accept (406), Content-Type (415) and
 * MCP-Protocol-Version (400), and negotiates `initialize` among the revisions it supports.
 */
export const sdkStreamableHttp = (
  dispatcher: McpDispatcher,
  logger: Logger,
  sessions?: McpSessions,
): SdkStreamableHttp => {
  // Built once: the SDK would otherwise compile a fresh Ajv instance for every request's server.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const serverFor = (principal: Principal | undefined, sessionId?: string): Server => {
    // The low-level Server, deprecated for applications in favour of McpServer, fits here: the tools and their
    // JSON Schemas come from our registry, and McpServer would convert and validate them a second time.
    const server = new Server(MCP_SERVER_INFO, {
      capabilities: sessionId === undefined ? MCP_CAPABILITIES : MCP_SESSION_CAPABILITIES,
      instructions: MCP_INSTRUCTIONS,
      jsonSchemaValidator,
    });
    server.setRequestHandler(ListToolsRequestSchema, () => listTools(dispatcher));
    server.setRequestHandler(CallToolRequestSchema, (request) =>
      dispatcher.callTool(principal, request.params.name, request.params.arguments),
    );
    server.setRequestHandler(ListResourcesRequestSchema, () => listResources(dispatcher));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => listResourceTemplates(dispatcher));
    server.setRequestHandler(ReadResourceRequestSchema, (request) =>
      dispatcher.readResource(principal, request.params.uri),
    );
    server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      if (sessionId === undefined || sessions === undefined) {
        throw new JsonRpcError(JSON_RPC.methodNotFound, NO_SESSION);
      }
      const { uri } = request.params;
      await dispatcher.checkSubscribable(principal, uri);
      try {
        sessions.subscribe(sessionId, uri);
      } catch (error) {
        if (!(error instanceof SubscriptionLimitError)) throw error;
        throw new JsonRpcError(JSON_RPC.serverError, error.message, { limit: error.limit });
      }
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      if (sessionId === undefined || sessions === undefined) {
        throw new JsonRpcError(JSON_RPC.methodNotFound, NO_SESSION);
      }
      // Unsubscribing from a resource the session does not watch changes nothing, like a repeated unsubscribe.
      sessions.unsubscribe(sessionId, request.params.uri);
      return {};
    });
    server.setRequestHandler(ListPromptsRequestSchema, () => listPrompts());
    server.setRequestHandler(GetPromptRequestSchema, (request) =>
      getPrompt(request.params.name, request.params.arguments),
    );
    server.setRequestHandler(CompleteRequestSchema, (request) =>
      dispatcher.completions.complete(principal, request.params.ref, request.params.argument),
    );
    // Replaces the SDK's own handler: no notifications/message is ever sent, so no level is kept.
    server.setRequestHandler(SetLevelRequestSchema, (request) => setLogLevel(request.params.level));
    return server;
  };

  const failed = (req: Request, res: Response, error: unknown) => {
    logger.error({ err: error, requestId: requestIdOf(req) }, 'MCP request failed');
    if (!res.headersSent) {
      res.status(500).json(jsonRpcErrorResponse(null, JSON_RPC.internalError, 'Internal server error'));
    }
  };

  const stateless = async (req: Request, res: Response) => {
    const server = serverFor(principalOf(req));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };

  /** `initialize` opening a session: kept in `sessions` once the SDK has minted its id. */
  const openSession = async (req: Request, res: Response, table: McpSessions, principal: Principal) => {
    const id = randomUUID();
    const server = serverFor(principal, id);
    let session: SdkSession | undefined = undefined;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      enableJsonResponse: true,
      onsessioninitialized: (): void => {
        if (session) table.add(id, principal, session);
      },
      onsessionclosed: (): void => table.remove(id),
    });
    session = new SdkSession(transport, server, logger);
    server.onclose = () => table.remove(id);
    res.on('close', () => {
      // A refused initialize (a bad protocol version) minted nothing: nothing to keep.
      if (transport.sessionId === undefined) session?.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };

  /** The session the request names, or a 404 answered (-32001: the client initializes again). */
  const sessionOf = (req: Request, res: Response, id: string): SdkSession | undefined => {
    const session = sessions?.find(id, principalOf(req));
    if (session instanceof SdkSession) return session;
    res
      .status(404)
      .json(
        jsonRpcErrorResponse(
          null,
          SESSION_NOT_FOUND,
          'Session not found: it expired, was ended, lives on another replica or belongs to another credential; initialize again',
        ),
      );
    return undefined;
  };

  const post: RequestHandler = async (req, res) => {
    const refused = invalidParamsReply(req.body);
    if (refused !== undefined) {
      res.status(refused.status).json(refused.body);
      return;
    }
    try {
      const id = req.get('mcp-session-id');
      const principal = principalOf(req);
      if (sessions !== undefined && id !== undefined) {
        const session = sessionOf(req, res, id);
        if (session) await session.transport.handleRequest(req, res, req.body);
        return;
      }
      if (sessions !== undefined && principal !== undefined && isInitialize(req.body)) {
        if (sessions.hasRoom()) {
          await openSession(req, res, sessions, principal);
          return;
        }
        logger.warn({ sessions: sessions.size }, 'MCP sessions at their limit: initialize served stateless');
      }
      await stateless(req, res);
    } catch (error) {
      failed(req, res, error);
    }
  };

  const withSession =
    (onStream: boolean) =>
    (refuse: RequestHandler): RequestHandler =>
    async (req, res, next) => {
      const id = req.get('mcp-session-id');
      if (sessions === undefined || id === undefined) {
        await refuse(req, res, next);
        return;
      }
      try {
        const session = sessionOf(req, res, id);
        if (!session) return;
        if (onStream) {
          sessions.streamOpened(id);
          res.on('close', () => sessions.streamClosed(id));
        }
        await session.transport.handleRequest(req, res);
      } catch (error) {
        failed(req, res, error);
      }
    };

  return { post, get: withSession(true), delete: withSession(false) };
};
