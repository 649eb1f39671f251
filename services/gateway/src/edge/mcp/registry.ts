import type { Tool } from './tool.js';

/**
 * Every agent-facing tool of docs/specification.md, "MCP tools", defined once. The transports (/mcp, /api/mcp/streamable,
 * /api/mcp/invoke, /api/mcp/stream) and the documents (/api/mcp/schema.json) all read this one list, so a tool
 * added to its context's list (contexts/<name>/index.ts) appears everywhere with the same schemas, auth and
 * annotations.
 */
export interface ToolRegistry {
  /** In a stable order (the contexts in turn, each in the order of its list): clients may cache tools/list. */
  readonly tools: readonly Tool[];
  find(name: string): Tool | undefined;
}

/** A registry of these tools; a name used twice is a programming error caught at start-up. */
export const registryOf = (tools: readonly Tool[]): ToolRegistry => {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    byName.set(tool.name, tool);
  }
  return { tools, find: (name) => byName.get(name) };
};
