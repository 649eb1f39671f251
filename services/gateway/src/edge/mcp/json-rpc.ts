import { z } from 'zod';
import type { Principal } from '../account.js';
import type { McpDispatcher } from './dispatcher.js';
import type { JsonRpcId } from './json-rpc-error.js';
import { JSON_RPC, JsonRpcError, jsonRpcErrorResponse } from './json-rpc-error.js';
import { listResources, listResourceTemplates, listTools } from './listings.js';
import { LOG_LEVELS, setLogLevel } from './logging.js';
import { getPrompt, listPrompts } from './prompts.js';
import {
  MCP_CAPABILITIES,
  MCP_INSTRUCTIONS,
  MCP_SERVER_INFO,
  negotiatedProtocolVersion,
} from './server-info.js';

/** The envelope of docs/specification.md, "MCP tools" (`jsonrpc` "2.0", `id` string, integer or null, `method`, `params` object). */
export const jsonRpcEnvelopeSchema = z.object({
  jsonrpc: z.literal('2.0', { error: 'must be "2.0"' }),
  id: z
    .union([z.string(), z.number().int(), z.null()], { error: 'must be a string, an integer or null' })
    .optional(),
  method: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
  params: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
});

export type JsonRpcEnvelope = z.infer<typeof jsonRpcEnvelopeSchema>;

const callToolParams = z.object({
  name: z.string({ error: 'name must be a string' }),
  arguments: z.record(z.string(), z.unknown(), { error: 'arguments must be an object' }).optional(),
});
const readResourceParams = z.object({ uri: z.string({ error: 'uri must be a string' }) });
const getPromptParams = z.object({
  name: z.string({ error: 'name must be a string' }),
  arguments: z
    .record(z.string(), z.string({ error: 'every value of arguments must be a string' }), {
      error: 'arguments must be an object of strings',
    })
    .optional(),
});
const completeParams = z.object({
  ref: z.discriminatedUnion(
    'type',
    [
      z.object({ type: z.literal('ref/prompt'), name: z.string({ error: 'ref.name must be a string' }) }),
      z.object({ type: z.literal('ref/resource'), uri: z.string({ error: 'ref.uri must be a string' }) }),
    ],
    { error: 'ref.type must be ref/prompt or ref/resource' },
  ),
  argument: z.object(
    {
      name: z.string({ error: 'argument.name must be a string' }),
      value: z.string({ error: 'argument.value must be a string' }),
    },
    { error: 'argument must be an object with name and value' },
  ),
});
const setLevelParams = z.object({
  level: z.enum(LOG_LEVELS, { error: `level must be one of ${LOG_LEVELS.join(', ')}` }),
});

/**
 * JSON-RPC batches are refused on both JSON-RPC transports alike (MCP removed batching in 2025-06-18): a batch
 * would count once against the rate limit for up to hundreds of calls (docs/security.md, "Rate limits").
 */
export const BATCH_REFUSED_MESSAGE =
  'Invalid Request: batches are not supported; send one JSON-RPC request per POST';

/** The 400 answer to a JSON-RPC batch: -32600 with a null id (a batch has no single id). */
export const batchRefusal = (): JsonRpcReply => ({
  status: 400,
  body: jsonRpcErrorResponse(null, JSON_RPC.invalidRequest, BATCH_REFUSED_MESSAGE),
});

/** What one POST answers: an HTTP status and a JSON-RPC response, or nothing (202) for a notification. */
export interface JsonRpcReply {
  readonly status: number;
  readonly body?: unknown;
}

const paramsOf = <S extends z.ZodType>(schema: S, params: unknown): z.output<S> => {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  throw new JsonRpcError(
    JSON_RPC.invalidParams,
    `Invalid params: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`,
  );
};

/**
 * /api/mcp/streamable: one JSON-RPC 2.0 request per POST, one JSON response, the same dispatcher as /mcp.
 * A body that is not a JSON-RPC request object is 400 with -32600 (batches included: MCP dropped them); an
 * unknown method is 400 with -32601 (docs/specification.md, "MCP tools" lists the methods the envelope may carry); everything else is
 * 200, with a JSON-RPC error where the method failed (-32602 for bad params or an unknown tool).
 */
export const answerJsonRpc = async (
  dispatcher: McpDispatcher,
  principal: Principal | undefined,
  body: unknown,
): Promise<JsonRpcReply> => {
  if (Array.isArray(body)) return batchRefusal();
  const envelope = jsonRpcEnvelopeSchema.safeParse(body);
  if (!envelope.success) {
    const id = idOf(body);
    const detail = envelope.error.issues
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'body'} ${issue.message}`)
      .join('; ');
    return {
      status: 400,
      body: jsonRpcErrorResponse(id, JSON_RPC.invalidRequest, `Invalid Request: ${detail}`),
    };
  }
  const { id, method, params } = envelope.data;
  // A notification (no id) gets no response; the ones MCP defines (initialized, cancelled) need no action here.
  if (id === undefined) return { status: 202 };
  try {
    const result = await resultOf(dispatcher, principal, method, params);
    if (result === undefined) {
      return {
        status: 400,
        body: jsonRpcErrorResponse(id, JSON_RPC.methodNotFound, `Method not found: ${method}`),
      };
    }
    return { status: 200, body: { jsonrpc: '2.0', id, result } };
  } catch (error) {
    if (error instanceof JsonRpcError) {
      return { status: 200, body: jsonRpcErrorResponse(id, error.code, error.message, error.data) };
    }
    throw error;
  }
};

/** The result of a known method, undefined for an unknown one. */
const resultOf = async (
  dispatcher: McpDispatcher,
  principal: Principal | undefined,
  method: string,
  params: JsonRpcEnvelope['params'],
): Promise<unknown> => {
  switch (method) {
    case 'initialize':
      return {
        protocolVersion: negotiatedProtocolVersion(params?.['protocolVersion']),
        capabilities: MCP_CAPABILITIES,
        serverInfo: MCP_SERVER_INFO,
        instructions: MCP_INSTRUCTIONS,
      };
    case 'ping':
      return {};
    case 'tools/list':
      return listTools(dispatcher);
    case 'tools/call': {
      const call = paramsOf(callToolParams, params);
      return dispatcher.callTool(principal, call.name, call.arguments);
    }
    case 'resources/list':
      return listResources(dispatcher);
    case 'resources/templates/list':
      return listResourceTemplates(dispatcher);
    case 'resources/read':
      return dispatcher.readResource(principal, paramsOf(readResourceParams, params).uri);
    case 'prompts/list':
      return listPrompts();
    case 'prompts/get': {
      const get = paramsOf(getPromptParams, params);
      return getPrompt(get.name, get.arguments);
    }
    case 'completion/complete': {
      const complete = paramsOf(completeParams, params);
      return dispatcher.completions.complete(principal, complete.ref, complete.argument);
    }
    case 'logging/setLevel':
      return setLogLevel(paramsOf(setLevelParams, params).level);
    default:
      return undefined;
  }
};

/** The methods whose params are checked before they run, each against its schema. */
/** A Map, not an object: a method named `constructor` or `__proto__` must find nothing (docs/security.md). */
const PARAMS_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['tools/call', callToolParams],
  ['resources/read', readResourceParams],
  // Served by POST /mcp in a session only (docs/agents.md, "MCP resource subscriptions").
  ['resources/subscribe', readResourceParams],
  ['resources/unsubscribe', readResourceParams],
  ['prompts/get', getPromptParams],
  ['completion/complete', completeParams],
  ['logging/setLevel', setLevelParams],
]);

/**
 * The -32602 answer to a request whose params its method cannot take (a tools/call without a name), or
 * undefined. POST /mcp asks this before the SDK, which would answer -32603 with its schema's error dump.
 */
export const invalidParamsReply = (body: unknown): JsonRpcReply | undefined => {
  const envelope = jsonRpcEnvelopeSchema.safeParse(body);
  if (!envelope.success || envelope.data.id === undefined) return undefined;
  const schema = PARAMS_SCHEMAS.get(envelope.data.method);
  if (schema === undefined) return undefined;
  try {
    paramsOf(schema, envelope.data.params);
    return undefined;
  } catch (error) {
    if (!(error instanceof JsonRpcError)) throw error;
    return { status: 200, body: jsonRpcErrorResponse(envelope.data.id, error.code, error.message) };
  }
};

/** The id of a malformed request, when it has a usable one, so the client can match the error. */
const idOf = (body: unknown): JsonRpcId => {
  if (typeof body !== 'object' || body === null || !('id' in body)) return null;
  const { id } = body;
  // An id beyond 2^53 lost its value in parsing: echoing it would answer another request's id.
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
};
