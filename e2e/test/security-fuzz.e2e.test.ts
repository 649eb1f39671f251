import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';

/**
 * Fuzzing every REST operation that `/openapi.json` describes: requests shaped by the operation's own schemas
 * (valid ones and near misses) and arbitrary JSON, with no credentials, a seller's, a buyer's or a forged one.
 * No answer may be a 5xx (but a 503 the operation documents, e.g. semantic search without embeddings), every
 * answer must come within the client's 10 s, and every JSON answer must match the schema the document gives for
 * its status (a status the operation does not document, or a body its schema refuses, is a failure). FUZZ_RUNS sets the cases per operation (default 5 here; the
 * nightly size is FUZZ_RUNS=1000), FUZZ_SEED replays a run.
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 5);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20231);

type Schema = Record<string, unknown>;
interface Operation {
  readonly method: string;
  readonly path: string;
  readonly parameters: readonly { name: string; in: string; required?: boolean; schema?: Schema }[];
  readonly body?: Schema;
  readonly statuses: readonly string[];
  /** The JSON schema of each documented status's body, where the answer is JSON. */
  readonly answers: Readonly<Record<string, Schema>>;
}

/** Values a schema accepts, mostly; bounded in size so that cases stay cheap. */
const arbitraryOf = (
  schema: Schema | undefined,
  components: Record<string, Schema>,
  depth = 0,
): fc.Arbitrary<unknown> => {
  if (schema === undefined || depth > 4) return fc.jsonValue({ maxDepth: 2 });
  const ref = schema['$ref'];
  if (typeof ref === 'string')
    return arbitraryOf(components[ref.split('/').pop() ?? ''], components, depth + 1);
  if ('const' in schema) return fc.constant(schema['const']);
  if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]));
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      return fc.oneof(...(options as Schema[]).map((option) => arbitraryOf(option, components, depth + 1)));
    }
  }
  const type = schema['type'];
  if (Array.isArray(type)) {
    return fc.oneof(
      ...(type as string[]).map((one) => arbitraryOf({ ...schema, type: one }, components, depth)),
    );
  }
  const number = (key: string): number | undefined =>
    typeof schema[key] === 'number' ? schema[key] : undefined;
  switch (type) {
    case 'string': {
      if (typeof schema['pattern'] === 'string') return fc.stringMatching(new RegExp(schema['pattern']));
      if (schema['format'] === 'email') return fc.emailAddress();
      if (schema['format'] === 'uri') return fc.webUrl();
      const minLength = number('minLength') ?? 0;
      return fc.string({
        minLength,
        maxLength: Math.max(minLength, Math.min(number('maxLength') ?? 40, 40)),
      });
    }
    case 'integer': {
      const min = number('minimum') ?? (number('exclusiveMinimum') ?? -1_000_001) + 1;
      const max = number('maximum') ?? (number('exclusiveMaximum') ?? 1_000_001) - 1;
      return fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) });
    }
    case 'number':
      return fc.double({ min: number('minimum') ?? -1e6, max: number('maximum') ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = number('minItems') ?? 0;
      return fc.array(arbitraryOf(schema['items'] as Schema | undefined, components, depth + 1), {
        minLength,
        maxLength: Math.max(minLength, Math.min(number('maxItems') ?? 4, 4)),
      });
    }
    case 'object': {
      const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
      const required = (schema['required'] ?? []) as string[];
      return fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([name, property]) => [
            name,
            arbitraryOf(property, components, depth + 1),
          ]),
        ),
        { requiredKeys: required.filter((name) => name in properties) },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
};

const ajvErrors = (validate: ValidateFunction): string =>
  (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`).join('; ');

/** A generated value as it goes into a path or a query string. */
const asText = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);

const operationsOf = (document: Schema): Operation[] => {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document['paths'] as Record<string, Record<string, Schema>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = (
        operation['requestBody'] as { content?: Record<string, { schema?: Schema }> } | undefined
      )?.content;
      const body = content?.['application/json']?.schema;
      const responses = (operation['responses'] ?? {}) as Record<
        string,
        { content?: Record<string, { schema?: Schema }> }
      >;
      const answers: Record<string, Schema> = {};
      for (const [status, response] of Object.entries(responses)) {
        const json = Object.entries(response.content ?? {}).find(([type]) => type.endsWith('json'));
        if (json?.[1].schema) answers[status] = json[1].schema;
      }
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: (operation['parameters'] ?? []) as Operation['parameters'],
        ...(body ? { body } : {}),
        statuses: Object.keys(responses),
        answers,
      });
    }
  }
  return operations;
};

describe('fuzzing every REST operation of /openapi.json', () => {
  let marketplace: EmbeddedMarketplace;
  let operations: Operation[];
  let components: Record<string, Schema>;
  let credentials: Record<string, string>[];
  let validatorOf: (schema: Schema) => ValidateFunction;
  let sellerKey: string;
  let buyerKey: string;

  beforeAll(async () => {
    marketplace = await EmbeddedMarketplace.start();
    const seller = await marketplace.client.createAccount('seller', 'Fuzz Seller');
    const buyer = await marketplace.client.createAccount('buyer', 'Fuzz Buyer');
    sellerKey = seller.apiKey;
    buyerKey = buyer.apiKey;
    const listing = await marketplace.client.publish(seller.apiKey, {
      name: 'Fuzz lot',
      description: 'Something for the operations on one listing to find',
      imageUrl: marketplace.images.imageUrl('fuzz'),
      promotePublicly: true,
    });
    expect(listing.status).toBe(201);
    const { status, body } = await marketplace.client.request('/openapi.json');
    expect(status).toBe(200);
    const document = body as Schema;
    operations = operationsOf(document);
    components = ((document['components'] as Schema | undefined)?.['schemas'] ?? {}) as Record<
      string,
      Schema
    >;
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; `$ref`s point into the document's components.
    const ajv = new Ajv2020({ strict: false, allErrors: false });
    addFormats.default(ajv);
    ajv.addSchema({ components: { schemas: components } }, 'openapi.json');
    validatorOf = (schema) =>
      ajv.compile(
        JSON.parse(
          JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/'),
        ) as Schema,
      );
    credentials = [
      {},
      { 'x-mcp-api-key': seller.apiKey },
      { 'x-mcp-api-key': buyer.apiKey },
      { 'x-mcp-api-key': 'lmk_forged_key' },
      { 'x-agent-token': 'a.1.2.forged' },
      { authorization: `Bearer ${marketplace.adminToken}` },
    ];
  }, 240_000);

  afterAll(async () => {
    await marketplace?.stop();
  }, 60_000);

  it('finds the operations to fuzz', () => {
    expect(operations.length).toBeGreaterThan(10);
    expect(operations.map((operation) => `${operation.method} ${operation.path}`)).toEqual(
      expect.arrayContaining(['POST /api/products', 'GET /api/ucp/catalog/products']),
    );
  });

  /** A failure when the answer's status is not documented for the operation, or its body not of its schema. */
  const undocumented = (
    method: string,
    path: string,
    answer: { status: number; body: unknown },
  ): string | undefined => {
    const operation = operations.find((one) => one.method === method && one.path === path);
    if (!operation) return `${method} ${path} is not in /openapi.json`;
    const schema = operation.answers[String(answer.status)];
    if (!operation.statuses.includes(String(answer.status))) {
      return `${method} ${path} answered ${answer.status}, which it does not document (${operation.statuses.join(', ')})`;
    }
    const validate = schema && validatorOf(schema);
    return validate && !validate(answer.body)
      ? `${method} ${path} answered ${answer.status} with a body its schema refuses (${ajvErrors(validate)})`
      : undefined;
  };

  it('documents what quick_buy answers on /api/mcp/invoke: the order, then 409 once the stock is gone', async () => {
    // Random parameters seldom make a valid purchase: this one is deterministic, on a lot of one unit.
    const published = await marketplace.client.publish(sellerKey, {
      name: 'Fuzz single unit',
      description: 'One unit, bought twice',
      imageUrl: marketplace.images.imageUrl('fuzz-single'),
      price: 20,
      quantity: 1,
      instantCheckout: true,
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    const quickBuy = () =>
      marketplace.client.request('/api/mcp/invoke', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mcp-api-key': buyerKey },
        body: JSON.stringify({
          tool: 'quick_buy',
          parameters: { product_id: published.body.id, quantity: 1, buyer_email: 'fuzz.buyer@example.com' },
        }),
      });
    const bought = await quickBuy();
    const soldOut = await quickBuy();
    expect([bought.status, soldOut.status]).toEqual([200, 409]);
    expect(
      [bought, soldOut].map((answer) => undocumented('POST', '/api/mcp/invoke', answer)).filter(Boolean),
    ).toEqual([]);
  });

  it(
    'answers no 5xx, never hangs and keeps to its documented answers, on any operation',
    async () => {
      const failures: string[] = [];
      for (const [index, operation] of operations.entries()) {
        const validators = new Map(
          Object.entries(operation.answers).map(([status, schema]) => [status, validatorOf(schema)]),
        );
        const pathParameters = operation.parameters.filter((parameter) => parameter.in === 'path');
        const queryParameters = operation.parameters.filter((parameter) => parameter.in === 'query');
        const request = fc.record({
          path: fc.record(
            Object.fromEntries(
              pathParameters.map((parameter) => [
                parameter.name,
                // A segment that is empty or a dot segment (which URLs resolve away) is another route:
                // `/api/products/` and `/api/products/.` are not `/api/products/{id}`.
                fc
                  .oneof(arbitraryOf(parameter.schema, components), fc.string({ maxLength: 30 }))
                  .filter((value) => !['', '.', '..'].includes(asText(value))),
              ]),
            ),
          ),
          query: fc.record(
            Object.fromEntries(
              queryParameters.map((parameter) => [
                parameter.name,
                fc.oneof(arbitraryOf(parameter.schema, components), fc.string({ maxLength: 20 })),
              ]),
            ),
            { requiredKeys: [] },
          ),
          body: fc.oneof(
            { weight: 3, arbitrary: arbitraryOf(operation.body, components) },
            { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
          ),
          credential: fc.constantFrom(...credentials),
        });
        await fc
          .assert(
            fc.asyncProperty(request, async ({ path, query, body, credential }) => {
              const url =
                operation.path.replace(/\{(\w+)\}/g, (_match, name: string) =>
                  encodeURIComponent(asText(path[name])),
                ) +
                (Object.keys(query).length > 0
                  ? `?${new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, asText(value)])).toString()}`
                  : '');
              const sendsBody = operation.method !== 'GET' && operation.method !== 'DELETE';
              const answer = await marketplace.client
                .request(url, {
                  method: operation.method,
                  headers: { ...credential, ...(sendsBody ? { 'content-type': 'application/json' } : {}) },
                  ...(sendsBody ? { body: JSON.stringify(body) ?? 'null' } : {}),
                })
                .catch((error: unknown) => ({
                  status: 599,
                  body: `no answer within 10 s: ${String(error)}`,
                }));
              const status = String(answer.status);
              const validate = validators.get(status);
              const problem =
                answer.status >= 500 && !(answer.status === 503 && operation.statuses.includes('503'))
                  ? 'a 5xx'
                  : !operation.statuses.includes(status)
                    ? 'an undocumented status'
                    : validate && !validate(answer.body)
                      ? `a body its schema refuses (${ajvErrors(validate)})`
                      : undefined;
              if (problem !== undefined) {
                failures.push(
                  `${problem}: ${operation.method} ${url} ${JSON.stringify(body)?.slice(0, 300)} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`,
                );
                return false;
              }
              return true;
            }),
            { numRuns: RUNS, seed: SEED + index, endOnFailure: true },
          )
          .catch(() => undefined);
      }
      expect(failures).toEqual([]);
    },
    Math.max(120_000, RUNS * 2_000 * 40),
  );
});
