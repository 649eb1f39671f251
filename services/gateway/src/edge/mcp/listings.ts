import type { McpDispatcher } from './dispatcher.js';
import { RESOURCE_MIME_TYPE } from './resources.js';

/** `_meta` key naming the credential a tool needs (none, buyer, seller): not part of MCP's Tool, so namespaced. */
export const AUTH_META_KEY = 'marketplace/auth';

/** `tools/list`: every tool in one page (16 tools need no cursor). */
export const listTools = (dispatcher: McpDispatcher) => ({
  tools: dispatcher.tools.map(({ auth, ...tool }) => ({ ...tool, _meta: { [AUTH_META_KEY]: auth } })),
});

export const listResources = (dispatcher: McpDispatcher) => ({
  resources: dispatcher.resources.fixed.map(({ uri, name, title, description }) => ({
    uri,
    name,
    title,
    description,
    mimeType: RESOURCE_MIME_TYPE,
  })),
});

export const listResourceTemplates = (dispatcher: McpDispatcher) => ({
  resourceTemplates: dispatcher.resources.templated.map(({ uriTemplate, name, title, description }) => ({
    uriTemplate,
    name,
    title,
    description,
    mimeType: RESOURCE_MIME_TYPE,
  })),
});
