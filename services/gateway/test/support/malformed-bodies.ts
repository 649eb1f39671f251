import fc from 'fast-check';
import { z } from 'zod';

/**
 * Malformed request bodies derived from the zod schema the route validates with: its JSON Schema gives every
 * field's type, enum, bounds, whether it is required and that no other field is allowed. A body starts valid
 * for that JSON Schema, then gets one to three mutations (a value of the wrong type, a value just outside a
 * bound, an unknown field, a required field left out); the schema itself then keeps only the bodies it refuses,
 * so every body generated is one the route must answer with 400.
 */
interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly JsonSchema[];
  readonly not?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly maxItems?: number;
  readonly items?: JsonSchema;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
}

type Body = Record<string, unknown>;

/** The variants of a property, nullability spelt either way (`type: [x, null]` or `anyOf`). */
const variantsOf = (schema: JsonSchema): JsonSchema[] => {
  if (schema.anyOf) return schema.anyOf.flatMap(variantsOf);
  if (Array.isArray(schema.type)) return schema.type.map((type: string) => ({ ...schema, type }));
  return [schema];
};

const validValue = (schema: JsonSchema): fc.Arbitrary<unknown> | undefined => {
  const variants = variantsOf(schema).filter(
    (variant) => variant.type !== 'null' && variant.not === undefined,
  );
  const arbitraries = variants.map((variant): fc.Arbitrary<unknown> => {
    if (variant.enum) return fc.constantFrom(...variant.enum);
    switch (variant.type) {
      case 'string':
        return fc.string({ minLength: 1, maxLength: 20 }).map((text) => `x${text}`);
      case 'number':
        // Whole cents: dollar amounts have at most two decimals.
        return fc.integer({ min: 1, max: Math.round((variant.maximum ?? 1_000) * 100) }).map((c) => c / 100);
      case 'integer':
        return fc.integer({ min: 1, max: 1_000 });
      case 'boolean':
        return fc.boolean();
      case 'array':
        return fc.array(validValue(variant.items ?? {}) ?? fc.constant('x'), {
          maxLength: variant.maxItems ?? 3,
        });
      default:
        return fc.constant(null);
    }
  });
  return arbitraries.length === 0 ? undefined : fc.oneof(...arbitraries);
};

/** Values no schema of ours takes for the field, or takes only within bounds these break. */
const outOfBounds = (schema: JsonSchema): unknown[] =>
  variantsOf(schema).flatMap((variant): unknown[] => {
    switch (variant.type) {
      case 'number':
        return [0, -0.01, -90_071_992_547_409.92, (variant.maximum ?? 0) + 0.01, 1e308, 1.001];
      case 'integer':
        return [1.5, 2 ** 53 + 2, -(2 ** 60)];
      case 'array':
        return [Array.from({ length: (variant.maxItems ?? 0) + 1 }, () => 'https://img.example/x.jpg')];
      case 'string':
        return ['   ', 'x'.repeat(10_001), variant.enum ? 'not-a-listed-value' : ''];
      default:
        return [];
    }
  });

const WRONG_TYPES: readonly unknown[] = [
  12,
  -1.5,
  true,
  'text',
  [],
  {},
  [1, 'a'],
  { nested: { deeply: [] } },
];

type Mutation = (body: Body) => Body;

const mutationsOf = (schema: JsonSchema): fc.Arbitrary<Mutation> => {
  const properties = Object.entries(schema.properties ?? {});
  const names = properties.map(([name]) => name);
  const mutations: fc.Arbitrary<Mutation>[] = [
    fc
      .tuple(fc.constantFrom(...names), fc.constantFrom(...WRONG_TYPES))
      .map(([name, value]) => (body) => ({ ...body, [name]: value })),
    fc
      .constantFrom(
        ...properties.flatMap(([name, property]) => outOfBounds(property).map((value) => [name, value])),
      )
      .map(([name, value]) => (body) => ({ ...body, [name as string]: value })),
    fc
      .string({ minLength: 1, maxLength: 12 })
      .filter((key) => !names.includes(key) && key !== '__proto__')
      .map((key) => (body) => ({ ...body, [key]: 'surprise' })),
  ];
  const required = schema.required ?? [];
  if (required.length > 0) {
    mutations.push(
      fc.constantFrom(...required).map((name) => (body) => {
        const { [name]: _dropped, ...rest } = body;
        return rest;
      }),
    );
  }
  return fc.oneof(...mutations);
};

export const malformedBodiesOf = (schema: z.ZodType): fc.Arbitrary<Body> => {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(json.properties ?? {})) {
    const value = validValue(property);
    if (value) fields[name] = value;
  }
  const required = (json.required ?? []).filter((name) => name in fields);
  const start = fc.record(fields, { requiredKeys: required });
  return fc
    .tuple(start, fc.array(mutationsOf(json), { minLength: 1, maxLength: 3 }))
    .map(([body, mutations]) => mutations.reduce<Body>((mutated, mutate) => mutate(mutated), body))
    .filter((body) => !schema.safeParse(body).success);
};
