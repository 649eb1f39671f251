import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { ImageServer } from '@marketplace/outbound-http/testing';
import { Cluster } from '../src/harness/cluster.js';
import { EmbeddedMarketplace } from '../src/harness/embedded.js';
import type { MarketplaceClient } from '../src/harness/marketplace-client.js';

/**
 * Fuzzing every REST operation that `/openapi.json` describes and every MCP tool of `/api/mcp/schema.json`, with
 * hostile input (docs/security.md, "Hostile input"): values shaped by each schema, near misses and wrong types;
 * strings over the whole of Unicode with NULs, lone surrogates, right-to-left and combining marks; numbers at and
 * beyond every bound (2^53 included); JSON nested deep and spread wide; duplicate keys. Each case goes with no
 * credential, a seller's, a buyer's, a buyer's agent token or a forged one. No answer may be a 5xx (but a 503 the
 * operation documents, e.g. semantic search without embeddings), every answer must come within the client's 10 s,
 * and every JSON answer must match the schema documented for its status (a tool's result its output_schema).
 * FUZZ_RUNS sets the cases per operation and per tool (default 5, what `pnpm test` runs; the nightly size is
 * FUZZ_RUNS=1000), FUZZ_SEED replays a run, FUZZ_MODE=cluster fuzzes a cluster (every service its own process)
 * instead of the embedded marketplace, FUZZ_ONLY narrows a run to the operations and tools it matches.
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 5);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20231);
const MODE = process.env['FUZZ_MODE'] ?? 'embedded';
/** FUZZ_ONLY: a regular expression on `METHOD /path` and tool names, to replay a failure quickly (same seeds). */
const ONLY = new RegExp(process.env['FUZZ_ONLY'] ?? '');
if (MODE !== 'embedded' && MODE !== 'cluster')
  throw new Error(`FUZZ_MODE is embedded or cluster, not ${MODE}`);

/** What the fuzzer needs of a running marketplace, in either mode. */
interface Target {
  /** Carries the admin token, so that it can create the accounts the credentials belong to. */
  readonly client: MarketplaceClient;
  readonly adminToken: string;
  readonly images: ImageServer;
  /** The processes' recent output, to explain a failure (a 5xx's cause is in the logs only). */
  describe(): string;
  stop(): Promise<void>;
}

const startTarget = async (): Promise<Target> => {
  if (MODE === 'embedded') {
    const embedded = await EmbeddedMarketplace.start();
    return Object.assign(embedded, { describe: () => embedded.process.logs });
  }
  const cluster = await Cluster.start();
  return {
    client: cluster.adminClient(),
    adminToken: cluster.adminToken,
    images: cluster.images,
    describe: () => cluster.describeProcesses(),
    stop: () => cluster.stop(),
  };
};

type Schema = Record<string, unknown>;
/** A tool as /api/mcp/schema.json lists it. */
interface Tool {
  readonly name: string;
  readonly input_schema: Schema;
  readonly output_schema: Schema;
}
interface Operation {
  readonly method: string;
  readonly path: string;
  readonly parameters: readonly { name: string; in: string; required?: boolean; schema?: Schema }[];
  readonly body?: Schema;
  readonly statuses: readonly string[];
  /** The JSON schema of each documented status's body, where the answer is JSON. */
  readonly answers: Readonly<Record<string, Schema>>;
}

/** One character of hostile text: any code point, and often the ones that broke storage or rendering. */
const hostileCharacter = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  // NUL, right-to-left mark and override, combining acute and diaeresis, byte order mark.
  { weight: 2, arbitrary: fc.constantFrom('\u0000', '\u200f', '\u202e', '\u0301', '\u0308', '\ufeff') },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)) },
);
const hostileString = (minLength = 0, maxLength = 40): fc.Arbitrary<string> =>
  fc.string({ unit: hostileCharacter, minLength, maxLength });

/** Numbers at and just beyond a schema's bounds, and the ones that break 32-bit, 53-bit and decimal code. */
const boundaryNumbers = (min: number | undefined, max: number | undefined): fc.Arbitrary<number> =>
  fc.constantFrom(
    ...[
      ...(min === undefined ? [] : [min, min - 1, min - 0.5]),
      ...(max === undefined ? [] : [max, max + 1, max + 0.5]),
      0,
      -1,
      2 ** 31,
      2 ** 53 - 1,
      2 ** 53,
      2 ** 53 + 2,
      -(2 ** 53) - 2,
      1e21,
      1e308,
      -1e308,
      5e-324,
    ].filter((value) => Number.isFinite(value)),
  );

/** JSON nested `depth` levels deep, alternating objects and arrays. */
const nestedValue = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? { a: value } : [value];
  return value;
};
/** Deep (past the 64-level cap and up to 300) and wide (thousands of members) values. */
const deepOrWide: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: 1, max: 300 }).map(nestedValue),
  fc.integer({ min: 100, max: 3_000 }).map((width) => Array.from({ length: width }, (_, index) => index)),
  fc
    .integer({ min: 100, max: 3_000 })
    .map((width) => Object.fromEntries(Array.from({ length: width }, (_, index) => [`k${index}`, index]))),
);

/** Values a schema accepts, mostly; bounded in size so that cases stay cheap. */
const arbitraryOf = (
  schema: Schema | undefined,
  components: Record<string, Schema>,
  depth = 0,
): fc.Arbitrary<unknown> =>
  // A member of another type now and then: wrong types at every level.
  depth === 0
    ? shapedBy(schema, components, depth)
    : fc.oneof(
        { weight: 8, arbitrary: shapedBy(schema, components, depth) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
      );

const shapedBy = (
  schema: Schema | undefined,
  components: Record<string, Schema>,
  depth: number,
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
      const minLength = number('minLength') ?? 0;
      const maxLength = Math.max(minLength, Math.min(number('maxLength') ?? 40, 40));
      const shaped =
        typeof schema['pattern'] === 'string'
          ? fc.stringMatching(new RegExp(schema['pattern']))
          : schema['format'] === 'email'
            ? fc.emailAddress()
            : schema['format'] === 'uri'
              ? fc.webUrl()
              : fc.string({ minLength, maxLength });
      // Valid-looking text with hostile characters spliced in, and hostile text of the allowed length.
      return fc.oneof(
        { weight: 3, arbitrary: shaped },
        {
          weight: 1,
          arbitrary: fc
            .tuple(shaped, hostileString(1, 3), fc.nat())
            .map(
              ([text, bad, at]) =>
                text.slice(0, at % (text.length + 1)) + bad + text.slice(at % (text.length + 1)),
            ),
        },
        { weight: 2, arbitrary: hostileString(minLength, maxLength) },
      );
    }
    case 'integer': {
      const min = number('minimum') ?? (number('exclusiveMinimum') ?? -1_000_001) + 1;
      const max = number('maximum') ?? (number('exclusiveMaximum') ?? 1_000_001) - 1;
      return fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) }) },
        { weight: 2, arbitrary: boundaryNumbers(number('minimum'), number('maximum')) },
      );
    }
    case 'number':
      return fc.oneof(
        {
          weight: 3,
          arbitrary: fc.double({
            min: number('minimum') ?? -1e6,
            max: number('maximum') ?? 1e6,
            noNaN: true,
          }),
        },
        { weight: 2, arbitrary: boundaryNumbers(number('minimum'), number('maximum')) },
      );
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

/**
 * Percent-encoding as a hostile client does it: a lone surrogate (which encodeURIComponent refuses) goes as the
 * three bytes it would have in UTF-8 were it a code point, which no decoder accepts.
 */
const percentEncoded = (text: string): string =>
  [...text]
    .map((character) => {
      const unit = character.charCodeAt(0);
      if (character.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
        const bytes = [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)];
        return bytes.map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
      }
      return encodeURIComponent(character);
    })
    .join('');

/** JSON text of a value, or, for a non-empty object, the same with its first key given twice. */
const bodyTextOf = ([value, duplicateKey, other]: [unknown, boolean, unknown]): string => {
  const text = JSON.stringify(value) ?? 'null';
  if (!duplicateKey || typeof value !== 'object' || value === null || Array.isArray(value)) return text;
  const [first] = Object.keys(value);
  return first === undefined
    ? text
    : `{${JSON.stringify(first)}:${JSON.stringify(other) ?? 'null'},${text.slice(1)}`;
};

/** Arbitrary bodies for a schema: shaped by it, any JSON, deep or wide JSON, some with a duplicate key, as text. */
const bodyTextsFor = (schema: Schema | undefined, components: Record<string, Schema>): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.oneof(
        { weight: 6, arbitrary: arbitraryOf(schema, components) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
        { weight: 1, arbitrary: deepOrWide },
      ),
      fc.boolean(),
      fc.jsonValue({ maxDepth: 1 }),
    )
    .map(bodyTextOf);

/**
 * The figures of a run, for docs/security.md: what was fuzzed, how many cases ran, failures, how long; with
 * failures, the processes' recent output too.
 */
const report = (
  what: string,
  cases: number,
  started: number,
  failures: readonly string[],
  logs: () => string,
): void => {
  process.stdout.write(
    `security-fuzz (${MODE}, FUZZ_RUNS=${RUNS}, FUZZ_SEED=${SEED}): ${what} × ${RUNS} cases ` +
      `(${cases} run), ${failures.length} failing, ${Math.round((Date.now() - started) / 1_000)} s\n` +
      (failures.length > 0 ? `--- the processes' recent output\n${logs()}\n` : ''),
  );
};

/**
 * Runs one operation's or one tool's property for RUNS cases (the first failing case ends it) and answers how
 * many ran. A failing case has recorded its failure; anything else that stops the run, such as an arbitrary or
 * a check that throws, is recorded as a failure too, so a run can never end early unseen.
 */
const fuzzCases = async <T>(
  label: string,
  arbitrary: fc.Arbitrary<T>,
  check: (value: T) => Promise<boolean>,
  seed: number,
  failures: string[],
): Promise<number> => {
  let cases = 0;
  const failedBefore = failures.length;
  await fc
    .assert(
      fc.asyncProperty(arbitrary, (value) => {
        cases += 1;
        return check(value);
      }),
      { numRuns: RUNS, seed, endOnFailure: true },
    )
    .catch((error: unknown) => {
      if (failures.length === failedBefore) failures.push(`${label} stopped: ${String(error).slice(0, 500)}`);
    });
  return cases;
};

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

describe(`fuzzing every REST operation of /openapi.json (${MODE} mode)`, () => {
  let marketplace: Target;
  let operations: Operation[];
  let components: Record<string, Schema>;
  let credentials: Record<string, string>[];
  let validatorOf: (schema: Schema) => ValidateFunction;
  let sellerKey: string;
  let buyerKey: string;
  let tools: Tool[];

  beforeAll(async () => {
    marketplace = await startTarget();
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
    const agentToken = await marketplace.client.request('/api/agent-tokens', {
      method: 'POST',
      headers: { 'x-mcp-api-key': buyer.apiKey },
    });
    expect(agentToken.status).toBe(201);
    credentials = [
      {},
      { 'x-mcp-api-key': seller.apiKey },
      { 'x-mcp-api-key': buyer.apiKey },
      { 'x-agent-token': (agentToken.body as { token: string }).token },
      { 'x-mcp-api-key': 'lmk_forged_key' },
      { 'x-agent-token': 'a.1.2.forged' },
      { authorization: `Bearer ${marketplace.adminToken}` },
    ];
    const manifest = await marketplace.client.request('/api/mcp/schema.json');
    expect(manifest.status).toBe(200);
    tools = (manifest.body as { tools: Tool[] }).tools;
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

  it('documents the 412 of a tool given another expected_version than the listing’s', async () => {
    // Found by the nightly fuzz: withdraw_listing with a stale expected_version answered an undocumented 412.
    const published = await marketplace.client.publish(sellerKey, {
      name: 'Fuzz versioned lot',
      description: 'Withdrawn at a version it is not at',
      imageUrl: marketplace.images.imageUrl('fuzz-versioned'),
      promotePublicly: true,
    });
    expect(published.status).toBe(201);
    const stale = await marketplace.client.request('/api/mcp/invoke', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-mcp-api-key': sellerKey },
      body: JSON.stringify({
        tool: 'withdraw_listing',
        parameters: { product_id: published.body.id, expected_version: 1_000 },
      }),
    });
    expect(stale.status).toBe(412);
    expect(undocumented('POST', '/api/mcp/invoke', stale)).toBeUndefined();
  });

  it(
    'answers no 5xx, never hangs and keeps to its documented answers, on any operation',
    async () => {
      const started = Date.now();
      const failures: string[] = [];
      let fuzzed = 0;
      let cases = 0;
      for (const [index, operation] of operations.entries()) {
        if (!ONLY.test(`${operation.method} ${operation.path}`)) continue;
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
                  .oneof(arbitraryOf(parameter.schema, components), hostileString(0, 30))
                  .filter((value) => !['', '.', '..'].includes(asText(value))),
              ]),
            ),
          ),
          query: fc.record(
            Object.fromEntries(
              queryParameters.map((parameter) => [
                parameter.name,
                fc.oneof(arbitraryOf(parameter.schema, components), hostileString(0, 20)),
              ]),
            ),
            { requiredKeys: [] },
          ),
          body: bodyTextsFor(operation.body, components),
          credential: fc.constantFrom(...credentials),
        });
        cases += await fuzzCases(
          `${operation.method} ${operation.path}`,
          request,
          async ({ path, query, body, credential }) => {
            const url =
              operation.path.replace(/\{(\w+)\}/g, (_match, name: string) =>
                percentEncoded(asText(path[name])),
              ) +
              (Object.keys(query).length > 0
                ? `?${Object.entries(query)
                    .map(([key, value]) => `${percentEncoded(key)}=${percentEncoded(asText(value))}`)
                    .join('&')}`
                : '');
            const sendsBody = operation.method !== 'GET' && operation.method !== 'DELETE';
            const answer = await marketplace.client
              .request(url, {
                method: operation.method,
                headers: { ...credential, ...(sendsBody ? { 'content-type': 'application/json' } : {}) },
                ...(sendsBody ? { body } : {}),
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
                `${problem}: ${operation.method} ${url} ${JSON.stringify(body.slice(0, 300))} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`,
              );
              return false;
            }
            return true;
          },
          SEED + index,
          failures,
        );
        fuzzed += 1;
      }
      report(`${fuzzed} of ${operations.length} operations`, cases, started, failures, () =>
        marketplace.describe(),
      );
      expect(failures).toEqual([]);
      expect(cases).toBe(fuzzed * RUNS);
    },
    Math.max(120_000, RUNS * 2_000 * 40),
  );

  it(
    'answers no 5xx, never hangs and keeps to its documented answers, on any MCP tool and transport',
    async () => {
      expect(tools.length).toBeGreaterThan(10);
      const started = Date.now();
      const failures: string[] = [];
      let fuzzed = 0;
      let cases = 0;
      const statusesOf = (path: string): readonly string[] =>
        operations.find((one) => one.method === 'POST' && one.path === path)?.statuses ?? [];
      for (const [index, tool] of tools.entries()) {
        if (!ONLY.test(tool.name)) continue;
        // A tool's own schema: its `$ref`s point into its `$defs`.
        const definitions = (tool.input_schema['$defs'] ?? {}) as Record<string, Schema>;
        const outputOf = validatorOf(tool.output_schema);
        const call = fc.record({
          argumentsText: bodyTextsFor(tool.input_schema, definitions),
          transport: fc.constantFrom('/api/mcp/invoke', '/api/mcp/streamable'),
          credential: fc.constantFrom(...credentials),
        });
        cases += await fuzzCases(
          tool.name,
          call,
          async ({ argumentsText, transport, credential }) => {
            const body =
              transport === '/api/mcp/invoke'
                ? `{"tool":${JSON.stringify(tool.name)},"parameters":${argumentsText}}`
                : `{"jsonrpc":"2.0","id":${index},"method":"tools/call","params":{"name":${JSON.stringify(tool.name)},"arguments":${argumentsText}}}`;
            const answer = await marketplace.client
              .request(transport, {
                method: 'POST',
                headers: { ...credential, 'content-type': 'application/json' },
                body,
              })
              .catch((error: unknown) => ({
                status: 599,
                body: `no answer within 10 s: ${String(error)}`,
              }));
            const problem = toolAnswerProblem(transport, answer, statusesOf(transport), outputOf);
            if (problem !== undefined) {
              failures.push(
                `${problem}: ${tool.name} on ${transport} ${JSON.stringify(argumentsText.slice(0, 300))} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`,
              );
              return false;
            }
            return true;
          },
          SEED + 1_000 + index,
          failures,
        );
        fuzzed += 1;
      }
      report(`${fuzzed} of ${tools.length} MCP tools`, cases, started, failures, () =>
        marketplace.describe(),
      );
      expect(failures).toEqual([]);
      expect(cases).toBe(fuzzed * RUNS);
    },
    Math.max(120_000, RUNS * 2_000 * 20),
  );

  /** What is wrong with a tool's answer, if anything: a 5xx, an undocumented status, a result off its schema. */
  const toolAnswerProblem = (
    transport: string,
    answer: { status: number; body: unknown },
    documentedStatuses: readonly string[],
    outputOf: ValidateFunction,
  ): string | undefined => {
    if (answer.status >= 500 && answer.status !== 503) return 'a 5xx';
    if (!documentedStatuses.includes(String(answer.status))) return 'an undocumented status';
    if (transport === '/api/mcp/invoke') {
      return answer.status === 200 && !outputOf(answer.body)
        ? `a result off the tool's output_schema (${ajvErrors(outputOf)})`
        : undefined;
    }
    // JSON-RPC: one response, with an error other than an internal one, or a result of the tool's schema.
    const reply = answer.body as {
      result?: { isError?: boolean; structuredContent?: unknown };
      error?: { code: number };
    };
    if (reply.error !== undefined)
      return reply.error.code === -32603 ? 'an internal JSON-RPC error' : undefined;
    if (reply.result === undefined) return 'neither a result nor an error';
    if (reply.result.isError === true) return undefined;
    return outputOf(reply.result.structuredContent)
      ? undefined
      : `a result off the tool's output_schema (${ajvErrors(outputOf)})`;
  };
});
