import { z } from 'zod';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeySchema } from '../schemas/idempotency-key.schema.js';
import { STATUS_CODES } from 'node:http';
import { PROBLEM_TYPES } from '../http/problem.js';
import type { OperationExamples, ResponseDoc, RouteAuth, RouteDoc } from './openapi.describe.js';
import { problemSchema } from './openapi.describe.js';

type JsonObject = Record<string, unknown>;

/** The API description's own version (docs/specification.md, "Versioning"): 1.0.0 until a breaking change. */
export const API_VERSION = '1.0.0';

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of a zod schema, without the root `$schema`. */
const jsonSchemaOf = (schema: z.ZodType, io: 'input' | 'output'): JsonObject => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  return rest;
};

const SECURITY: Record<RouteAuth, JsonObject[]> = {
  none: [],
  api_key_optional: [{}, { ApiKey: [] }],
  api_key: [{ ApiKey: [] }],
  api_key_or_agent_token_optional: [{}, { ApiKey: [] }, { AgentToken: [] }],
  api_key_or_agent_token: [{ ApiKey: [] }, { AgentToken: [] }],
  admin: [{ AdminToken: [] }],
};

/** One OpenAPI parameter per property of an object schema. */
const parametersOf = (schema: z.ZodType, location: 'path' | 'query' | 'header'): JsonObject[] => {
  const json = jsonSchemaOf(schema, 'input');
  const properties = (json['properties'] ?? {}) as Record<string, JsonObject>;
  const required = new Set((json['required'] ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: propertySchema,
    };
  });
};

/** A media type's `examples`: one named example, when there is one. */
const examplesOf = (name: string, value: unknown): JsonObject =>
  value === undefined ? {} : { examples: { [name]: { value } } };

/** The problem document the gateway answers with this status (problem.ts), detailed by the route's words. */
const problemExampleOf = (status: number, detail: string, publicBaseUrl: string): JsonObject => {
  const known = Object.entries(PROBLEM_TYPES).find(([, type]) => type.status === status);
  return known === undefined
    ? { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail }
    : { type: `${publicBaseUrl}/problems/${known[0]}`, title: known[1].title, status, detail };
};

const responseOf = (
  doc: ResponseDoc | string,
  status: number,
  example: unknown,
  publicBaseUrl: string,
): JsonObject => {
  if (typeof doc === 'string') {
    const problem = {
      schema: PROBLEM_REF,
      ...examplesOf('problem', problemExampleOf(status, doc, publicBaseUrl)),
    };
    return { description: doc, content: { 'application/problem+json': problem } };
  }
  if (doc.schema === undefined && !doc.text) return { description: doc.description };
  const contentType = doc.contentType ?? (status >= 400 ? 'application/problem+json' : 'application/json');
  // A document described in words is still JSON when its media type says so (/openapi.json, /asyncapi.json).
  const textSchema = contentType.endsWith('json') ? { type: 'object' } : { type: 'string' };
  const schema = doc.schema ? jsonSchemaOf(doc.schema, 'output') : textSchema;
  return {
    description: doc.description,
    content: { [contentType]: { schema, ...examplesOf(String(status), example) } },
  };
};

/**
 * Every operation that reads a credential refuses a bad one with 401, also where the credential is optional (a
 * key that was sent must be valid): documented here once, unless the route says more about its own 401.
 */
const credentialResponses = (auth: RouteAuth): Record<number, string> =>
  auth === 'none'
    ? {}
    : {
        401: auth.endsWith('_optional')
          ? 'A credential was sent but is not valid'
          : 'Missing or invalid credential',
      };

const RATE_LIMITED = {
  429: 'Rate limit reached: retry after Retry-After seconds (RateLimit-* headers on every answer)',
};

const IDEMPOTENCY_KEY_PARAMETERS = parametersOf(
  z.object({ [IDEMPOTENCY_KEY_HEADER]: idempotencyKeySchema.optional() }),
  'header',
);
const REQUIRED_IDEMPOTENCY_KEY_PARAMETERS = parametersOf(
  z.object({ [IDEMPOTENCY_KEY_HEADER]: idempotencyKeySchema }),
  'header',
);
const IDEMPOTENCY_CONFLICT = {
  422: 'The Idempotency-Key was used before with a different request (code idempotency_conflict); a malformed key is a 400',
};
/** A successful answer echoes the request's key. */
const ECHOED_IDEMPOTENCY_KEY = {
  [IDEMPOTENCY_KEY_HEADER]: {
    description: "The request's Idempotency-Key, when it sent one",
    schema: { type: 'string' },
  },
};

const operationOf = (
  doc: RouteDoc,
  examples: OperationExamples | undefined,
  publicBaseUrl: string,
): JsonObject => {
  const parameters = [
    ...(doc.pathParameters ? parametersOf(doc.pathParameters, 'path') : []),
    ...(doc.query ? parametersOf(doc.query, 'query') : []),
    ...(doc.idempotencyKey === 'required'
      ? REQUIRED_IDEMPOTENCY_KEY_PARAMETERS
      : doc.idempotencyKey
        ? IDEMPOTENCY_KEY_PARAMETERS
        : []),
  ];
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: doc.tags,
    security: SECURITY[doc.auth],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: jsonSchemaOf(doc.body, 'input'),
                ...examplesOf('request', examples?.body),
              },
            },
          },
        }
      : {}),
    ...(doc.fileBody
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              doc.fileBody.map((type) => [
                type,
                {
                  schema: { type: 'string', contentMediaType: type },
                  // A binary file (XLSX) cannot be shown as text: its example names what it holds.
                  examples: {
                    request: type.startsWith('text/')
                      ? { value: examples?.body }
                      : {
                          summary: 'the rows of the text example as a workbook (binary, not shown)',
                          value: '',
                        },
                  },
                },
              ]),
            ),
          },
        }
      : {}),
    responses: Object.fromEntries(
      Object.entries({
        ...credentialResponses(doc.auth),
        ...(doc.rateLimited ? RATE_LIMITED : {}),
        ...(doc.idempotencyKey ? IDEMPOTENCY_CONFLICT : {}),
        ...doc.responses,
      }).map(([status, response]) => {
        const example = examples?.responses[Number(status)];
        const answer = responseOf(response, Number(status), example, publicBaseUrl);
        const echoesKey = doc.idempotencyKey && status.startsWith('2');
        return [status, echoesKey ? { ...answer, headers: ECHOED_IDEMPOTENCY_KEY } : answer];
      }),
    ),
  };
};

/**
 * /openapi.json (docs/specification.md, "Versioning": OpenAPI 3.1.0, version 1.0.0), generated from the route docs, whose schemas are the
 * zod schemas the handlers validate with, and their examples (keyed by operationId). Built once at start-up.
 */
export const openApiDocument = (
  routeDocs: readonly RouteDoc[],
  publicBaseUrl: string,
  examples: Readonly<Record<string, OperationExamples>> = {},
): JsonObject => {
  const paths: Record<string, Record<string, JsonObject>> = {};
  const operationIds = new Set<string>();
  for (const doc of routeDocs) {
    if (operationIds.has(doc.operationId)) throw new Error(`operationId ${doc.operationId} is used twice`);
    operationIds.add(doc.operationId);
    const path = (paths[doc.path] ??= {});
    if (path[doc.method]) throw new Error(`${doc.method.toUpperCase()} ${doc.path} is documented twice`);
    path[doc.method] = operationOf(doc, examples[doc.operationId], publicBaseUrl);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Liquidation Marketplace API',
      version: API_VERSION,
      description:
        'B2B marketplace for surplus, overstock and returned inventory: catalog search, quotes, checkout, ' +
        'seller listings, and MCP tool endpoints for agents. Amounts are integer cents unless a parameter ' +
        'says dollars. Errors are RFC 9457 problem documents.',
    },
    servers: [{ url: publicBaseUrl }],
    tags: [...new Set(routeDocs.flatMap((doc) => doc.tags))].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas: { Problem: jsonSchemaOf(problemSchema, 'output') },
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-MCP-API-Key',
          description: "A seller's or buyer's API key, issued by an operator and shown once.",
        },
        AgentToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Agent-Token',
          description:
            'A signed buyer-scoped token <sessionId>.<expiresMs>.<buyerUserId>.<hmac> from POST /api/agent-tokens.',
        },
        AdminToken: { type: 'http', scheme: 'bearer', description: 'The operator token ADMIN_TOKEN.' },
      },
    },
  };
};
