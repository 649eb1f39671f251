/**
 * Turns a query parameter into what both drivers serialize the same way (see the value rules in
 * database.port.ts). Without this, pg and PGlite disagree: PGlite sends an object bound to a text parameter as
 * "[object Object]", pg as JSON; pg sends a Date in local time, PGlite in UTC.
 */
export const toDriverParam = (value: unknown): unknown => {
  if (value === undefined || value === null) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return value;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError('invalid Date passed as a query parameter');
    return value.toISOString();
  }
  // Buffers (possibly from another realm, as under jest) become this realm's Uint8Array, which both accept.
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value)) return value.map(toDriverParam);
  return JSON.stringify(value, (_key, nested: unknown) =>
    typeof nested === 'bigint' ? nested.toString() : nested,
  );
};

export const toDriverParams = (params: readonly unknown[] | undefined): unknown[] =>
  params === undefined ? [] : params.map(toDriverParam);
