import { z } from 'zod';
import type { Tool, ToolAnnotations, ToolAuth } from './tool.js';

export type JsonSchema = Record<string, unknown>;

/** A tool as MCP `tools/list` and /api/mcp/schema.json describe it: JSON Schema 2020-12 from its zod schemas. */
export interface ToolDescriptor {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  readonly annotations: ToolAnnotations & { readonly title: string };
  readonly auth: ToolAuth;
}

/** `search_inventory` → `Search inventory`. */
const titleOf = (name: string): string => {
  const words = name.replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * The JSON Schema of a zod schema. Input schemas are converted as inputs (a field with a default is optional),
 * output schemas as outputs. `$schema` is dropped: MCP's default dialect is already 2020-12.
 */
export const jsonSchemaOf = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
};

export const describeTool = (tool: Tool): ToolDescriptor => {
  const title = titleOf(tool.name);
  return {
    name: tool.name,
    title,
    description: tool.description,
    inputSchema: { ...jsonSchemaOf(tool.inputSchema, 'input'), examples: tool.examples },
    outputSchema: jsonSchemaOf(tool.outputSchema, 'output'),
    annotations: { title, ...tool.annotations },
    auth: tool.auth,
  };
};
