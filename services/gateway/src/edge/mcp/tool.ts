import { z } from 'zod';
import type { ErrorKind } from '@marketplace/platform';
import type { Principal } from '../account.js';

/** Who may call a tool (docs/specification.md, "MCP tools"): anyone, a buyer (API key or agent token), or a seller (API key). */
export type ToolAuth = 'none' | 'buyer' | 'seller';

/** MCP tool annotations, set truthfully: clients decide on confirmation prompts from them. */
export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  /** True when the tool reaches beyond the marketplace (fetches a URL, sends mail, calls a webhook). */
  readonly openWorldHint: boolean;
}

/**
 * An agent-facing function (docs/specification.md, "MCP tools"), independent of the transport that will expose it (MCP, REST invoke):
 * its input schema, as the specification lists the parameters, and its handler. The transport parses the
 * input with `inputSchema` (a failure is a 400 naming the parameter) before calling `handler`.
 */
export interface Tool<S extends z.ZodType = z.ZodType, R = unknown> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: S;
  /**
   * The shape of the handler's result (a JSON object, as MCP requires of structured content): published as the
   * MCP output schema and in /api/mcp/schema.json, and checked in the conformance tests.
   */
  readonly outputSchema: z.ZodType<R>;
  readonly auth: ToolAuth;
  readonly annotations: ToolAnnotations;
  /** Typical arguments, published as the input schema's `examples`; each must parse with `inputSchema`. */
  readonly examples: readonly Record<string, unknown>[];
  /**
   * Failures this tool answers on MCP as JSON-RPC errors (-32000, `data: {code, content}`) rather than `isError`
   * results, and then an unexpected failure as -32603: for a binding that defines its own errors (UCP's checkout,
   * docs/protocols.md §2.2). Absent, every failure is an `isError` result.
   */
  readonly protocolErrors?: readonly ErrorKind[];
  /**
   * An array argument whose elements the tool checks one by one, text PostgreSQL cannot store included, and
   * answers each on its own (bulk_upsert_listings' `items`): the dispatcher leaves their text to the tool, so
   * one bad element never fails the call.
   */
  readonly itemsCheckedOneByOne?: string;
  /** `principal` is the caller behind an API key or agent token, undefined when anonymous. */
  handler(principal: Principal | undefined, input: z.output<S>): Promise<R>;
}

/** Whether the tool creates once per `idempotency_key` (create_listing, request_quote, quick_buy). */
export const takesIdempotencyKey = (tool: Tool): boolean =>
  tool.inputSchema instanceof z.ZodObject && 'idempotency_key' in tool.inputSchema.shape;
