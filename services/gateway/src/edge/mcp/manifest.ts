import type { McpDispatcher } from './dispatcher.js';
import { RESOURCE_MIME_TYPE } from './resources.js';
import { MCP_PROTOCOL_VERSIONS, MCP_SERVER_INFO, MCP_SESSION_CAPABILITIES } from './server-info.js';

/** The tool manifest's format version (docs/specification.md, "Versioning"). */
export const MANIFEST_SCHEMA_VERSION = '1.0';

/**
 * /api/mcp/schema.json (docs/specification.md, "Transports"): every tool with its input and output JSON Schemas, auth and
 * annotations, the resources, and the transports, generated from the same registry the transports serve.
 */
export const mcpManifest = (dispatcher: McpDispatcher, publicBaseUrl: string) => ({
  schema_version: MANIFEST_SCHEMA_VERSION,
  name: MCP_SERVER_INFO.name,
  title: MCP_SERVER_INFO.title,
  version: MCP_SERVER_INFO.version,
  tools: dispatcher.tools.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    input_schema: tool.inputSchema,
    output_schema: tool.outputSchema,
    auth: tool.auth,
    annotations: tool.annotations,
  })),
  resources: [
    ...dispatcher.resources.fixed.map(({ uri, name, title, description }) => ({
      uri,
      name,
      title,
      description,
      mime_type: RESOURCE_MIME_TYPE,
    })),
    ...dispatcher.resources.templated.map(({ uriTemplate, name, title, description }) => ({
      uri_template: uriTemplate,
      name,
      title,
      description,
      mime_type: RESOURCE_MIME_TYPE,
    })),
  ],
  transports: {
    mcp: {
      url: `${publicBaseUrl}/mcp`,
      kind: 'streamable-http',
      protocol_versions: MCP_PROTOCOL_VERSIONS,
      // Without Mcp-Session-Id; an authenticated initialize opens a session (docs/agents.md, "MCP resource
      // subscriptions").
      stateless: true,
      sessions: {
        opened_by: 'initialize with X-MCP-API-Key or X-Agent-Token',
        header: 'Mcp-Session-Id',
        stream: 'GET',
        resource_subscriptions: MCP_SESSION_CAPABILITIES.resources.subscribe,
        subscribable: ['marketplace://subscriptions/{id}'],
        notifications: ['notifications/resources/updated'],
      },
    },
    streamable: { url: `${publicBaseUrl}/api/mcp/streamable`, kind: 'json-rpc-2.0' },
    invoke: { url: `${publicBaseUrl}/api/mcp/invoke`, kind: 'http-json', body: '{tool, parameters}' },
    stream: {
      url: `${publicBaseUrl}/api/mcp/stream`,
      kind: 'http-sse',
      body: '{tool, parameters}',
      events: ['message', 'done'],
    },
  },
  authentication: {
    api_key: { header: 'X-MCP-API-Key', for: 'seller tools; a buyer key for buyer tools' },
    agent_token: { header: 'X-Agent-Token', for: 'buyer tools (get_order_status, open_dispute)' },
  },
});
