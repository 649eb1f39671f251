import { protocol } from '@electric-sql/pglite';

const { serialize } = protocol;

/** A parameter as bound: text, binary (bytea) or NULL. */
export type BoundParam = string | Uint8Array | null;

const quotedElement = (text: string): string => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

const hex = (bytes: ArrayBufferView): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

/** A scalar's text; anything else never leaves `toDriverParam`. */
const scalarText = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  throw new TypeError(`a query parameter must be toDriverParam's, not a ${typeof value}`);
};

/** An array parameter as a PostgreSQL array literal, every element quoted, as pg writes it. */
const arrayLiteral = (values: readonly unknown[]): string =>
  `{${values
    .map((value) => {
      if (value === null || value === undefined) return 'NULL';
      if (Array.isArray(value)) return arrayLiteral(value);
      if (ArrayBuffer.isView(value)) return quotedElement(`\\x${hex(value)}`);
      return quotedElement(scalarText(value));
    })
    .join(',')}}`;

/**
 * A parameter (already `toDriverParam`'s: null, string, number, boolean, bytes or an array of them) as pg binds
 * it without knowing its type: text for PostgreSQL to read as the type it infers, bytes in binary. So a statement
 * needs no Describe of its parameters first.
 */
export const boundParam = (value: unknown): BoundParam => {
  if (value === null || value === undefined) return null;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value)) return arrayLiteral(value);
  return scalarText(value);
};

/**
 * One parameterised statement as the extended protocol's five messages in one buffer (Parse, Bind, Describe the
 * portal, Execute, Sync), which PGlite runs in one call into WASM (docs/architecture.md, "Embedded mode: PGlite
 * and the event loop"), where its `query` makes six calls.
 */
export const extendedStatement = (sql: string, params: readonly unknown[]): Uint8Array => {
  const parts = [
    serialize.parse({ text: sql }),
    serialize.bind({ values: params.map(boundParam) }),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.sync(),
  ];
  const message = new Uint8Array(parts.reduce((length, part) => length + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    message.set(part, offset);
    offset += part.byteLength;
  }
  return message;
};
