import type { RequestHandler } from 'express';
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
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { Principal } from '../account.js';
import { principalOf } from '../http/auth.middleware.js';
import { requestIdOf } from '../http/request-log.js';
import type { McpDispatcher } from './dispatcher.js';
import { invalidParamsReply } from './json-rpc.js';
import { JSON_RPC, jsonRpcErrorResponse } from './json-rpc-error.js';
import { listResources, listResourceTemplates, listTools } from './listings.js';
import { setLogLevel } from './logging.js';
import { getPrompt, listPrompts } from './prompts.js';
import { MCP_CAPABILITIES, MCP_INSTRUCTIONS, MCP_SERVER_INFO } from './server-info.js';

/**
 * POST /mcp: MCP Streamable HTTP through the official SDK, stateless (no session id is minted) and answering
 * plain JSON. Each request gets a fresh SDK `Server` bound to the caller's principal, as the SDK's stateless
 * example does; the handlers only call the shared dispatcher. The SDK checks Accept (406), Content-Type (415)
 * and MCP-Protocol-Version (400), and negotiates `initialize` among the revisions it supports.
 */
export const sdkStreamableHttp = (dispatcher: McpDispatcher, logger: Logger): RequestHandler => {
  // Built once: the SDK would otherwise compile a fresh Ajv instance for every request's server.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const serverFor = (principal: Principal | undefined): Server => {
    // The low-level Server, deprecated for applications in favour of McpServer, fits here: the tools and their
    // JSON Schemas come from our registry, and McpServer would convert and validate them a second time.
    const server = new Server(MCP_SERVER_INFO, {
      capabilities: MCP_CAPABILITIES,
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
    server.setRequestHandler(ListPromptsRequestSchema, () => listPrompts());
    server.setRequestHandler(GetPromptRequestSchema, (request) =>
      getPrompt(request.params.name, request.params.arguments),
    );
    server.setRequestHandler(CompleteRequestSchema, (request) =>
      dispatcher.completions.complete(principal, request.params.ref, request.params.argument),
    );
    // Replaces the SDK's own handler, which would keep the level for a session this stateless server never has.
    server.setRequestHandler(SetLevelRequestSchema, (request) => setLogLevel(request.params.level));
    return server;
  };

  return async (req, res) => {
    const refused = invalidParamsReply(req.body);
    if (refused !== undefined) {
      res.status(refused.status).json(refused.body);
      return;
    }
    const server = serverFor(principalOf(req));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      logger.error({ err: error, requestId: requestIdOf(req) }, 'MCP request failed');
      if (!res.headersSent) {
        res.status(500).json(jsonRpcErrorResponse(null, JSON_RPC.internalError, 'Internal server error'));
      }
    }
  };
};
