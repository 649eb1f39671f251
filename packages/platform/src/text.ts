import type { FieldViolation } from './errors.js';

/**
 * Input that PostgreSQL cannot store, refused at every edge (docs/security.md, "Hostile input"): `text` and
 * `jsonb` take no NUL character, and a lone UTF-16 surrogate has no UTF-8 form. Right-to-left marks,
 * combining marks and every other valid code point are ordinary text.
 */
export const unstorableTextReason = (text: string): string | undefined => {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (!text.isWellFormed()) return 'must not contain a lone surrogate (not valid Unicode)';
  return undefined;
};

/** Enough to name every offending field of any real request; a hostile one does not get a longer answer. */
const MAX_VIOLATIONS = 20;

/** Objects whose members are data, not bytes or other built-ins that hold no text. */
const isPlainContainer = (value: object): boolean =>
  Array.isArray(value) ||
  Object.getPrototypeOf(value) === Object.prototype ||
  Object.getPrototypeOf(value) === null;

/**
 * One violation per string, or object key, of a JSON-like value (a parsed body, tool arguments, a decoded
 * protobuf message) that PostgreSQL could not store; paths are the keys joined with `/`, `''` for the value
 * itself. Iterative, so a deeply nested value cannot exhaust the stack.
 */
export const unstorableTextViolations = (value: unknown, basePath = ''): FieldViolation[] => {
  const violations: FieldViolation[] = [];
  const pending: { value: unknown; path: string }[] = [{ value, path: basePath }];
  const join = (path: string, key: string | number): string => (path === '' ? String(key) : `${path}/${key}`);
  while (pending.length > 0 && violations.length < MAX_VIOLATIONS) {
    const { value: current, path } = pending.pop() as { value: unknown; path: string };
    if (typeof current === 'string') {
      const reason = unstorableTextReason(current);
      if (reason !== undefined) violations.push({ path, message: reason });
    } else if (typeof current === 'object' && current !== null && isPlainContainer(current)) {
      const entries = Array.isArray(current) ? current.entries() : Object.entries(current);
      const children: { value: unknown; path: string }[] = [];
      for (const [key, child] of entries) {
        const childPath = join(path, key);
        const keyReason = typeof key === 'string' ? unstorableTextReason(key) : undefined;
        if (keyReason !== undefined) {
          violations.push({ path: childPath, message: `is a field name that ${keyReason}` });
        }
        children.push({ value: child, path: childPath });
      }
      // Reversed onto the stack so that strings come out in document order.
      pending.push(...children.reverse());
    }
  }
  return violations;
};

/**
 * How deeply request JSON may nest. The deepest document the marketplace reads (a saved search's query inside
 * a subscription inside a JSON-RPC envelope) needs 6 levels; past 64 it is an attack on the parser's consumers.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The top-level member under which a JSON-like value nests deeper than `maxDepth` objects and arrays (`''`
 * when the value itself is the array that does), or undefined when it stays within. Iterative, like above.
 */
export const tooDeeplyNested = (value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined => {
  const pending: { value: unknown; depth: number; top: string }[] = [{ value, depth: 0, top: '' }];
  while (pending.length > 0) {
    const { value: current, depth, top } = pending.pop() as { value: unknown; depth: number; top: string };
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > maxDepth) return top;
    const entries = Array.isArray(current) ? [...current.entries()] : Object.entries(current);
    for (const [key, child] of entries) {
      pending.push({ value: child, depth: depth + 1, top: depth === 0 ? String(key) : top });
    }
  }
  return undefined;
};

/** Text made safe for HTML element content and quoted attribute values (the emails' HTML parts). */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
