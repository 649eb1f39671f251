import { describe, expect, it } from '@jest/globals';
import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { marketplaceOpenApi } from '../src/edge/discovery/openapi.routes.js';

type JsonObject = Record<string, unknown>;
interface MediaType {
  readonly schema: JsonObject;
  readonly examples?: Record<string, { readonly value: unknown }>;
}

const document = marketplaceOpenApi('https://marketplace.example') as {
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject> };
};

// OpenAPI 3.1's schema dialect is JSON Schema 2020-12.
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const validatorOf = (schema: JsonObject): ValidateFunction => {
  const ref = schema['$ref'];
  // Problem answers refer to the one component schema.
  const resolved =
    typeof ref === 'string' ? document.components.schemas[ref.split('/').at(-1) ?? ''] : schema;
  if (resolved === undefined) throw new Error(`unresolved ${String(ref)}`);
  return ajv.compile(resolved);
};

/** Every media type of the document: each request body and each answer with a body. */
const mediaTypes = Object.entries(document.paths).flatMap(([path, operations]) =>
  Object.entries(operations).flatMap(([method, operation]) => {
    const where = `${method.toUpperCase()} ${path} (${String(operation['operationId'])})`;
    const body = (operation['requestBody'] as { content: Record<string, MediaType> } | undefined)?.content;
    const responses = operation['responses'] as Record<string, { content?: Record<string, MediaType> }>;
    return [
      ...Object.entries(body ?? {}).map(([type, media]) => ({ where: `${where} request ${type}`, media })),
      ...Object.entries(responses).flatMap(([status, response]) =>
        Object.entries(response.content ?? {}).map(([type, media]) => ({
          where: `${where} ${status} ${type}`,
          media,
        })),
      ),
    ];
  }),
);

describe('/openapi.json examples (docs/agents.md, "Route docs → /openapi.json")', () => {
  it('covers every operation: its request body and each answer with a body', () => {
    expect(mediaTypes.length).toBeGreaterThan(100);
    const missing = mediaTypes
      .filter(({ media }) => Object.keys(media.examples ?? {}).length === 0)
      .map(({ where }) => where);
    expect(missing).toEqual([]);
  });

  it('has every example validate against the schema it illustrates', () => {
    const invalid = mediaTypes.flatMap(({ where, media }) => {
      const validate = validatorOf(media.schema);
      return Object.entries(media.examples ?? {}).flatMap(([name, { value }]) =>
        validate(value) ? [] : [`${where} example ${name}: ${ajv.errorsText(validate.errors)}`],
      );
    });
    expect(invalid).toEqual([]);
  });

  it('refuses an example that does not fit (the check is not vacuous)', () => {
    const createListing = mediaTypes.find(({ where }) =>
      where.startsWith('POST /api/products (createListing) request'),
    );
    if (createListing === undefined) throw new Error('createListing has no request body');
    const validate = validatorOf(createListing.media.schema);
    expect(validate({ name: 'Pallet', description: 'x', shipping: { mode: 'teleport' } })).toBe(false);
    expect(validate({ name: 'Pallet', description: 'x', shipping: { mode: 'included' } })).toBe(true);
  });
});
