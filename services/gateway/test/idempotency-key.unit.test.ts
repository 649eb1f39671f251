import { describe, expect, it } from '@jest/globals';
import { idempotencyKeyProblem } from '@marketplace/eventsourcing';
import fc from 'fast-check';
import { takesIdempotencyKey } from '../src/edge/mcp/tool.js';
import { checkIdempotencyKeyHeader } from '../src/edge/http/idempotency-key.js';
import { ROUTE_DOCS } from '../src/edge/discovery/openapi.routes.js';
import { openApiDocument } from '../src/edge/discovery/openapi.document.js';
import { idempotencyKeySchema } from '../src/edge/schemas/idempotency-key.schema.js';
import { describeTool } from '../src/edge/mcp/tool-manifest.js';
import { everyTool } from './support/every-tool.js';

type Operation = {
  readonly parameters?: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[];
  readonly responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, unknown> }
  >;
};

const document = openApiDocument(ROUTE_DOCS, 'https://market.test') as {
  paths: Record<string, Record<string, Operation>>;
};
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
);
const CREATING_OPERATIONS = [
  'POST /api/products',
  'POST /api/products/bulk',
  'POST /api/products/imports',
  'POST /api/ucp/quotes',
  'POST /api/ucp/quotes/{id}/accept-and-pay',
  'POST /api/ucp/checkout',
  'POST /api/ucp/shopping/checkout-sessions',
  'PUT /api/ucp/shopping/checkout-sessions/{id}',
  'POST /api/ucp/shopping/checkout-sessions/{id}/cancel',
  'POST /api/mcp/invoke',
  'POST /api/mcp/stream',
];
/** ACP takes a key on every POST, and requires it (docs/protocols.md §3.2). */
const REQUIRING_OPERATIONS = [
  'POST /api/acp/checkout_sessions',
  'POST /api/acp/checkout_sessions/{id}',
  'POST /api/acp/checkout_sessions/{id}/complete',
  'POST /api/acp/checkout_sessions/{id}/cancel',
];

const tools = everyTool();

describe('the gateway checks idempotency keys by the services’ rule', () => {
  it('accepts and refuses exactly the keys the owning services do', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300, unit: 'binary' }), (key) => {
        expect(idempotencyKeySchema.safeParse(key).success).toBe(idempotencyKeyProblem(key) === undefined);
      }),
    );
  });

  it('names the header in the violation of a malformed key', () => {
    expect(() => checkIdempotencyKeyHeader('')).toThrow(
      expect.objectContaining({ violations: [{ path: 'Idempotency-Key', message: 'must not be empty' }] }),
    );
    expect(checkIdempotencyKeyHeader('order-42')).toBe('order-42');
  });
});

describe('/openapi.json on idempotency keys', () => {
  it('documents the Idempotency-Key header (required on ACP), its echo and the 422 on the creating operations only', () => {
    const documented = operations.filter(({ operation }) =>
      (operation.parameters ?? []).some((parameter) => parameter.name === 'Idempotency-Key'),
    );
    expect(documented.map(({ name }) => name).sort()).toEqual(
      [...CREATING_OPERATIONS, ...REQUIRING_OPERATIONS].sort(),
    );
    for (const { name, operation } of documented) {
      const header = operation.parameters?.find((parameter) => parameter.name === 'Idempotency-Key');
      expect({ name, header }).toMatchObject({
        header: {
          in: 'header',
          required: REQUIRING_OPERATIONS.includes(name),
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      });
      // ACP answers its own Error object (docs/protocols.md §3.2), the other operations a problem document.
      expect({ name, conflict: operation.responses['422'] }).toMatchObject({
        conflict: {
          content: REQUIRING_OPERATIONS.includes(name)
            ? {
                'application/json': {
                  schema: expect.objectContaining({ required: ['type', 'code', 'message'] }),
                },
              }
            : { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
        },
      });
      const success = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
      expect(success.length).toBeGreaterThan(0);
      for (const [, answer] of success) expect(answer.headers).toHaveProperty('Idempotency-Key');
    }
  });

  it('gives the Problem schema the code member the 422 carries', () => {
    const components = (document as unknown as { components: { schemas: Record<string, unknown> } })
      .components;
    expect(components.schemas['Problem']).toMatchObject({ properties: { code: { type: 'string' } } });
  });
});

describe('the tools that create take idempotency_key', () => {
  it('are create_listing, bulk_upsert_listings, request_quote, quick_buy and accept_quote_and_pay, whose input schemas document it', () => {
    const taking = tools.filter(takesIdempotencyKey);
    expect(taking.map((tool) => tool.name).sort()).toEqual([
      'accept_quote_and_pay',
      'bulk_upsert_listings',
      'create_listing',
      'quick_buy',
      'request_quote',
    ]);
    for (const tool of taking) {
      const { inputSchema } = describeTool(tool);
      expect(inputSchema).toMatchObject({
        properties: {
          idempotency_key: {
            type: 'string',
            maxLength: 255,
            description: expect.stringContaining('idempotency_conflict'),
          },
        },
      });
      expect(inputSchema['required']).not.toContain('idempotency_key');
    }
  });
});
