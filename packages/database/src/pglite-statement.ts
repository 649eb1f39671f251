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

const joined = (parts: readonly Uint8Array[]): Uint8Array => {
  const message = new Uint8Array(parts.reduce((length, part) => length + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    message.set(part, offset);
    offset += part.byteLength;
  }
  return message;
};

/** How many statements stay prepared; the least recently run one is closed to make room. */
export const MAX_PREPARED_STATEMENTS = 256;

/** A statement's messages, and what to tell the cache once PGlite answered them. */
export interface StatementMessage {
  readonly message: Uint8Array;
  /** Call with whether the answer holds ParseComplete: a Parse that failed prepared nothing. */
  readonly parsed: (parseComplete: boolean) => void;
}

/**
 * The statements of one PGlite session, each prepared once under a name of its own: a statement runs as the
 * extended protocol's messages in one buffer, which PGlite runs in one call into WASM where its `query` makes six
 * (docs/architecture.md, "Embedded mode: PGlite and the event loop"), and only its first run carries the Parse,
 * so PostgreSQL parses and analyses its text once, and plans it as it plans any prepared statement. Prepared
 * statements outlive transactions, failed ones included, so the cache holds whatever PostgreSQL answered.
 */
export class PreparedStatements {
  /** Statement names by SQL text, least recently run first. */
  readonly #names = new Map<string, string>();
  /** Closes to send ahead of the next statement (statements evicted from the cache). */
  #closing: Uint8Array[] = [];
  #nextName = 0;

  /** Bind, Describe the portal, Execute and Sync; first Parse when `sql` is not prepared yet. */
  statement(sql: string, params: readonly unknown[]): StatementMessage {
    const prepared = this.#names.get(sql);
    const name = prepared ?? `s${this.#nextName++}`;
    const parts = this.#closing;
    this.#closing = [];
    if (prepared === undefined) parts.push(serialize.parse({ name, text: sql }));
    else this.#names.delete(sql);
    parts.push(
      serialize.bind({ statement: name, values: params.map(boundParam) }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
    );
    return {
      message: joined(parts),
      parsed: (parseComplete) => {
        if (prepared === undefined && !parseComplete) return;
        this.#names.set(sql, name);
        if (this.#names.size <= MAX_PREPARED_STATEMENTS) return;
        const [oldest, oldestName] = this.#names.entries().next().value!;
        this.#names.delete(oldest);
        this.#closing.push(serialize.close({ type: 'S', name: oldestName }));
      },
    };
  }
}
