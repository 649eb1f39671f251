import { createHash } from 'node:crypto';
import { AppError, validationError } from '@marketplace/platform';

/**
 * Idempotency keys of creating commands (docs/idempotency.md): the pure part. A key is chosen by the client
 * (`Idempotency-Key` header, `idempotency_key` tool argument, `idempotency_key` gRPC field); the owning service
 * records it with a hash of the request and the stream it created, in the transaction that creates it.
 */

/** ACP's bound on a key. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/**
 * Printable ASCII (space to tilde), neither starting nor ending with a space: HTTP strips surrounding
 * whitespace from header values, so refusing it keeps a key the same in a header and in a tool argument.
 */
export const IDEMPOTENCY_KEY_PATTERN = /^[!-~]([ -~]*[!-~])?$/;

/** How long a key is remembered at least: a client retries within minutes, ACP asks for 24 hours. */
export const IDEMPOTENCY_KEY_RETENTION_MS = 24 * 60 * 60 * 1_000;

/** How often a service deletes expired keys: a key is forgotten between 24 and 25 hours after it was recorded. */
export const IDEMPOTENCY_KEY_PURGE_INTERVAL_MS = 60 * 60 * 1_000;

/** What is wrong with a key, in words for a field violation; undefined for a well-formed key. */
export const idempotencyKeyProblem = (key: string): string | undefined => {
  if (key.length === 0) return 'must not be empty';
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    return `must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`;
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    return 'must be printable ASCII without leading or trailing spaces';
  }
  return undefined;
};

/** Who a key belongs to: two callers choosing the same key never meet. */
export type IdempotencyScope = `account:${number}` | `email:${string}` | 'anonymous';

/**
 * The scope of a caller's keys: its verified account, else the buyer email an anonymous request carries
 * (lower-cased, as mailboxes are matched), else the shared anonymous scope, where only a random key is safe.
 */
export const idempotencyScopeOf = (caller: {
  readonly accountId?: number | undefined;
  readonly email?: string | undefined;
}): IdempotencyScope => {
  if (caller.accountId !== undefined) return `account:${caller.accountId}`;
  const email = caller.email?.trim().toLowerCase();
  return email ? `email:${email}` : 'anonymous';
};

/** A creating command's key, where it belongs and what was asked with it. */
export interface IdempotentRequest {
  readonly scope: IdempotencyScope;
  readonly key: string;
  /** SHA-256 (hex) of the operation and the request's canonical JSON: `requestHashOf`. */
  readonly requestHash: string;
}

/**
 * JSON with object keys sorted and `undefined` members left out, so equal requests give equal text whatever
 * order their fields were built in and whether an absent optional field is missing or `undefined`.
 */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, member: unknown) =>
    member !== null && typeof member === 'object' && !Array.isArray(member)
      ? Object.fromEntries(
          Object.entries(member)
            .filter(([, field]) => field !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : member,
  );

/**
 * The hash a replay is compared by. The operation is part of it, so one key cannot stand for two kinds of
 * command; `request` holds what decides the outcome (the caller's account and the command's data), never the
 * correlation id or trace context, which change with every retry.
 */
export const requestHashOf = (operation: string, request: unknown): string =>
  createHash('sha256')
    .update(canonicalJson([operation, request]))
    .digest('hex');

/**
 * The request's key checked and bound to its scope and hash; undefined when no key was sent (the command then
 * runs without one). A malformed key is a validation error on `path`, before anything is recorded.
 */
export const idempotentRequestOf = (
  key: string | undefined,
  options: {
    readonly path: string;
    readonly scope: IdempotencyScope;
    readonly operation: string;
    readonly request: unknown;
  },
): IdempotentRequest | undefined => {
  if (key === undefined) return undefined;
  const problem = idempotencyKeyProblem(key);
  if (problem !== undefined) {
    throw validationError(`invalid idempotency key: ${problem}`, [{ path: options.path, message: problem }]);
  }
  return { scope: options.scope, key, requestHash: requestHashOf(options.operation, options.request) };
};

/** The key was used before for a different request: 422 `idempotency_conflict` at the gateway. */
export const idempotencyConflict = (key: string): AppError =>
  new AppError(
    'idempotency_conflict',
    `idempotency_conflict: the idempotency key ${JSON.stringify(key)} was already used for a different request; ` +
      'repeat that request exactly, or send this one with a new key',
  );
