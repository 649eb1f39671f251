/**
 * Application errors. Every layer throws these; each edge maps them once: the gateway to RFC 9457 problem
 * documents, the gRPC transport to status codes (see @marketplace/rpc), MCP tools to isError results.
 */
export interface FieldViolation {
  /** JSON-pointer-like path of the offending field, e.g. `galleryImageUrls/3` or `price`. */
  readonly path: string;
  readonly message: string;
}

export type ErrorKind =
  | 'validation'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'unavailable'
  | 'payload_too_large'
  /** An idempotency key already created something from a different request (docs/idempotency.md). */
  | 'idempotency_conflict'
  /** The caller's If-Match names a version the resource is no longer at (RFC 9110, 412). */
  | 'precondition_failed';

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly violations: readonly FieldViolation[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AppError';
  }
}

export const validationError = (message: string, violations: readonly FieldViolation[] = []): AppError =>
  new AppError('validation', message, violations);
export const notFound = (message: string): AppError => new AppError('not_found', message);
export const conflict = (message: string): AppError => new AppError('conflict', message);
export const forbidden = (message: string): AppError => new AppError('forbidden', message);
export const unauthenticated = (message: string): AppError => new AppError('unauthenticated', message);
export const unavailable = (message: string): AppError => new AppError('unavailable', message);
export const preconditionFailed = (message: string): AppError => new AppError('precondition_failed', message);

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;

/** HTTP status for each kind, used by the gateway's problem documents. */
export const httpStatusOf: Record<ErrorKind, number> = {
  validation: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  idempotency_conflict: 422,
  precondition_failed: 412,
  rate_limited: 429,
  unavailable: 503,
};
