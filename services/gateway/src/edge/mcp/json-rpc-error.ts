/** JSON-RPC 2.0 error codes the MCP transports answer with (docs/specification.md, "Errors"). */
export const JSON_RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Implementation-defined: an HTTP-level refusal (credential, origin, rate limit, unavailable backend). */
  serverError: -32000,
  /** MCP 2025-11-25: `resources/read` of a URI that names nothing. */
  resourceNotFound: -32002,
} as const;

/**
 * A protocol-level failure. The SDK's Protocol answers a thrown error with its numeric `code`, `message` and
 * `data`, and /api/mcp/streamable does the same, so both transports report it identically.
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
}

export type JsonRpcId = string | number | null;

export const jsonRpcErrorResponse = (id: JsonRpcId, code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0' as const,
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});
