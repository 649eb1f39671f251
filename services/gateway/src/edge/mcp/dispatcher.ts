import type { AppError, Logger } from '@marketplace/platform';
import {
  forbidden,
  isAppError,
  unauthenticated,
  unstorableTextViolations,
  validationError,
} from '@marketplace/platform';
import type { ToolRegistry } from './registry.js';
import type { Tool } from './tool.js';
import { takesIdempotencyKey } from './tool.js';
import type { Principal } from '../account.js';
import { API_KEY_HEADER } from '../http/auth.middleware.js';
import { violationsOf, WHOLE_INPUT } from '../schemas/validate.js';
import { JSON_RPC, JsonRpcError } from './json-rpc-error.js';
import type { CompletionSources } from './completions.js';
import { McpCompletions } from './completions.js';
import type { McpResources } from './resources.js';
import { RESOURCE_MIME_TYPE } from './resources.js';
import type { ToolDescriptor } from './tool-manifest.js';
import { describeTool } from './tool-manifest.js';

const AGENT_TOKEN_HEADER = 'X-Agent-Token';

/** An MCP `CallToolResult`: the JSON in a text block (for older clients) and as structured content. */
export interface ToolCallResult {
  [key: string]: unknown;
  readonly content: { type: 'text'; text: string }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

export interface ResourceContents {
  [key: string]: unknown;
  readonly contents: { uri: string; mimeType: string; text: string }[];
}

/** How to reach the arguments in error paths: `limit` on MCP, `parameters/limit` on /api/mcp/invoke. */
export interface InvokeOptions {
  readonly argumentsPath?: string;
}

/** The arguments whose text the dispatcher checks: all but the elements a tool checks one by one. */
const argumentsCheckedHere = (tool: Tool, args: unknown): unknown => {
  const items = tool.itemsCheckedOneByOne;
  if (
    items === undefined ||
    typeof args !== 'object' ||
    args === null ||
    !Array.isArray((args as Record<string, unknown>)[items])
  ) {
    return args ?? {};
  }
  return { ...args, [items]: [] };
};

/**
 * The one dispatcher behind /mcp, /api/mcp/streamable, /api/mcp/invoke and /api/mcp/stream: it finds the tool,
 * checks the caller against the tool's `auth`, validates the arguments with the tool's zod schema and runs it;
 * it lists and reads the resources. The transports only translate to and from their wire formats.
 */
export class McpDispatcher {
  /** `tools/list`, in the registry's stable order; converted to JSON Schema once. */
  readonly tools: readonly ToolDescriptor[];
  /** `completion/complete` for the prompts' arguments and the resource templates' variables. */
  readonly completions: McpCompletions;

  constructor(
    private readonly registry: ToolRegistry,
    readonly resources: McpResources,
    private readonly logger: Logger,
    completionSources: CompletionSources = {},
  ) {
    this.tools = registry.tools.map(describeTool);
    this.completions = new McpCompletions(
      completionSources,
      () => resources.templated.map((template) => template.uriTemplate),
      logger,
    );
  }

  hasTool(name: string): boolean {
    return this.registry.find(name) !== undefined;
  }

  /** Whether the named tool takes an `idempotency_key` argument (false for an unknown tool). */
  takesIdempotencyKey(name: string): boolean {
    const tool = this.registry.find(name);
    return tool !== undefined && takesIdempotencyKey(tool);
  }

  /**
   * Runs a tool and answers its result, or throws an AppError: validation (unknown tool, invalid arguments),
   * unauthenticated or forbidden (the tool's `auth`), or whatever the application answered.
   */
  async invoke(
    principal: Principal | undefined,
    name: string,
    args: unknown,
    options: InvokeOptions = {},
  ): Promise<unknown> {
    const tool = this.registry.find(name);
    if (!tool) {
      throw validationError(`unknown tool ${name}`, [
        { path: 'tool', message: `must be one of ${this.registry.tools.map((t) => t.name).join(', ')}` },
      ]);
    }
    authorize(tool, principal);
    // Text PostgreSQL could not store is refused here, once for every transport (docs/security.md), the
    // arguments' depth having been capped with the body.
    const textViolations = unstorableTextViolations(argumentsCheckedHere(tool, args)).map((violation) => ({
      ...violation,
      path: violation.path || WHOLE_INPUT,
    }));
    const parsed = tool.inputSchema.safeParse(args ?? {});
    if (!parsed.success || textViolations.length > 0) {
      const prefix = options.argumentsPath;
      const violations = [...textViolations, ...(parsed.success ? [] : violationsOf(parsed.error))].map(
        ({ path, message }) => ({
          path: prefix === undefined ? path : `${prefix}/${path}`.replace(/\/\(root\)$/, ''),
          message,
        }),
      );
      throw validationError(
        `invalid arguments for ${name}: ${violations.map((v) => `${v.path} ${v.message}`).join('; ')}`,
        violations,
      );
    }
    return tool.handler(principal, parsed.data);
  }

  /**
   * MCP `tools/call`. An unknown tool is a protocol error (-32602); everything that goes wrong inside a known
   * tool, invalid arguments included, is an `isError` result whose text tells the agent what to change, but for
   * the failures a tool lists in `protocolErrors` (then -32000, and -32603 for an unexpected one).
   */
  async callTool(principal: Principal | undefined, name: string, args: unknown): Promise<ToolCallResult> {
    const tool = this.registry.find(name);
    if (!tool) {
      throw new JsonRpcError(JSON_RPC.invalidParams, `Unknown tool: ${name}. tools/list names the tools.`);
    }
    try {
      const value = (await this.invoke(principal, name, args)) as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
    } catch (error) {
      const protocolError = this.protocolError(tool, error);
      if (protocolError) throw protocolError;
      return { content: [{ type: 'text', text: this.failureText(name, error) }], isError: true };
    }
  }

  /** The JSON-RPC error a tool with `protocolErrors` answers a failure with, if it is one of them. */
  private protocolError(tool: Tool, error: unknown): JsonRpcError | undefined {
    if (tool.protocolErrors === undefined) return undefined;
    if (!isAppError(error)) {
      this.logger.error({ err: error, tool: tool.name }, 'MCP tool failed unexpectedly');
      return new JsonRpcError(JSON_RPC.internalError, `${tool.name} failed on the marketplace's side`);
    }
    if (!tool.protocolErrors.includes(error.kind)) return undefined;
    const content = `${error.message}${HINTS[error.kind] ?? ''}`;
    return new JsonRpcError(JSON_RPC.serverError, error.message, { code: error.kind, content });
  }

  /** MCP `resources/read`: one JSON document; unknown URIs are -32002, refusals -32000 with the HTTP status. */
  async readResource(principal: Principal | undefined, uri: string): Promise<ResourceContents> {
    const read = this.resources.find(uri);
    if (!read) {
      throw new JsonRpcError(JSON_RPC.resourceNotFound, `Resource not found: ${uri}`, { uri });
    }
    try {
      const value = await read(principal);
      return { contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: JSON.stringify(value) }] };
    } catch (error) {
      throw this.resourceFailure(error, uri, 'reading');
    }
  }

  /**
   * MCP `resources/subscribe` in a session: resolves when `principal` may watch `uri` (its own saved search with an
   * mcp_resource channel). An unknown URI, or another account's saved search, is -32002; a resource that cannot
   * be watched is -32602 naming `uri`.
   */
  async checkSubscribable(principal: Principal | undefined, uri: string): Promise<void> {
    const check = this.resources.subscribable(uri);
    if (check === 'unknown') {
      throw new JsonRpcError(JSON_RPC.resourceNotFound, `Resource not found: ${uri}`, { uri });
    }
    if (check === 'not_subscribable') {
      throw new JsonRpcError(
        JSON_RPC.invalidParams,
        `Invalid params: uri ${uri} cannot be subscribed to; only saved searches (marketplace://subscriptions/{id}) can`,
        { uri },
      );
    }
    try {
      await check(principal);
    } catch (error) {
      throw this.resourceFailure(error, uri, 'subscribing to');
    }
  }

  /** A failure reading or watching a resource as a JSON-RPC error: -32002, -32602, or -32000 with the kind. */
  private resourceFailure(error: unknown, uri: string, doing: string): JsonRpcError {
    if (!isAppError(error)) {
      this.logger.error({ err: error, uri }, `MCP resource ${doing} failed`);
      return new JsonRpcError(JSON_RPC.internalError, `Internal error while ${doing} the resource`);
    }
    if (error.kind === 'not_found') {
      return new JsonRpcError(JSON_RPC.resourceNotFound, `Resource not found: ${uri}`, { uri });
    }
    if (error.kind === 'validation') {
      // Reads answer the service's message as before; a refused subscription names the param (uri).
      const violations = error.violations.map(({ path, message }) => `${path} ${message}`).join('; ');
      if (doing === 'reading' || violations === '') {
        return new JsonRpcError(JSON_RPC.invalidParams, error.message);
      }
      return new JsonRpcError(JSON_RPC.invalidParams, `Invalid params: ${violations}`, { uri });
    }
    return new JsonRpcError(JSON_RPC.serverError, `${error.message}${HINTS[error.kind] ?? ''}`, {
      kind: error.kind,
    });
  }

  /** The text of an `isError` result: what failed, each offending argument, and what to do about it. */
  private failureText(name: string, error: unknown): string {
    if (!isAppError(error)) {
      this.logger.error({ err: error, tool: name }, 'MCP tool failed unexpectedly');
      return `${name} failed on the marketplace's side. Retry shortly; if it keeps failing, report it.`;
    }
    const violations = error.violations.map(({ path, message }) => `\n- ${path}: ${message}`).join('');
    return `${error.message}${violations}${HINTS[error.kind] ?? ''}`;
  }
}

const HINTS: Partial<Record<AppError['kind'], string>> = {
  validation: '\nCorrect the arguments listed and call the tool again.',
  unauthenticated: `\nSend the ${API_KEY_HEADER} header (or, for buyer tools, ${AGENT_TOKEN_HEADER}) with the request.`,
  forbidden: '\nThis credential may not do this; use the account that owns the resource.',
  not_found: '\nCheck the id; search_inventory lists the public lots.',
  conflict: '\nRead the current state again, then retry.',
  rate_limited: '\nThe allowance is used up; wait before retrying.',
  unavailable: '\nA marketplace service is unavailable right now; retry shortly.',
};

/** The tool's declared `auth`, enforced once for every transport. */
const authorize = (tool: Tool, principal: Principal | undefined): void => {
  if (tool.auth === 'none') return;
  if (tool.auth === 'seller') {
    if (!principal) throw unauthenticated(`${tool.name} needs a seller's ${API_KEY_HEADER}`);
    if (principal.role !== 'seller') throw forbidden(`${tool.name} is a seller tool; this is a buyer's key`);
    return;
  }
  if (!principal) {
    throw unauthenticated(`${tool.name} needs the buyer's ${API_KEY_HEADER} or an ${AGENT_TOKEN_HEADER}`);
  }
  if (principal.role !== 'buyer') throw forbidden(`${tool.name} is a buyer tool; this is a seller's key`);
};
