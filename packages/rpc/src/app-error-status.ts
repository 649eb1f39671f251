import { AppError, type ErrorKind, type FieldViolation } from '@marketplace/platform';
import { Status, type ClientError } from 'nice-grpc-common';
import {
  BadRequest,
  ErrorInfo,
  RichClientError,
  RichServerError,
  type ErrorDetails,
} from 'nice-grpc-error-details';

/** `ErrorInfo.domain` of the details our servers attach; `ErrorInfo.reason` is the AppError kind in upper case. */
export const ERROR_DOMAIN = 'marketplace';

/**
 * The status code of each kind. A conflict is ABORTED rather than ALREADY_EXISTS: our conflicts are mostly
 * optimistic-concurrency failures (an expected version that moved on), which gRPC's guide assigns to ABORTED
 * ("retry at a higher level"), and the exact kind travels in ErrorInfo anyway.
 */
const STATUS_OF_KIND: Record<ErrorKind, Status> = {
  validation: Status.INVALID_ARGUMENT,
  unauthenticated: Status.UNAUTHENTICATED,
  forbidden: Status.PERMISSION_DENIED,
  not_found: Status.NOT_FOUND,
  conflict: Status.ABORTED,
  rate_limited: Status.RESOURCE_EXHAUSTED,
  unavailable: Status.UNAVAILABLE,
  payload_too_large: Status.RESOURCE_EXHAUSTED,
  // The key exists already, for another request; the ErrorInfo reason tells it from a plain conflict.
  idempotency_conflict: Status.ALREADY_EXISTS,
  // The state the caller expected (its If-Match version) is not the current one; the ErrorInfo reason tells it
  // from insufficient stock, which is FAILED_PRECONDITION too.
  precondition_failed: Status.FAILED_PRECONDITION,
};

/**
 * The kind of a status that carries no ErrorInfo of ours (raised by gRPC itself or by a foreign server). Codes
 * missing here (INTERNAL, UNKNOWN, UNIMPLEMENTED, DATA_LOSS, UNAUTHENTICATED, OK) have no kind: they stay ClientErrors, which the
 * edges treat as unexpected.
 */
const KIND_OF_BARE_STATUS: Partial<Record<Status, ErrorKind>> = {
  [Status.INVALID_ARGUMENT]: 'validation',
  [Status.OUT_OF_RANGE]: 'validation',
  // No UNAUTHENTICATED: bare, it is a service refusing this process's own token (internal-auth.ts), a fault of
  // the deployment (a wrong INTERNAL_AUTH_KEY) that must not reach the end caller as their 401.
  [Status.PERMISSION_DENIED]: 'forbidden',
  [Status.NOT_FOUND]: 'not_found',
  [Status.ABORTED]: 'conflict',
  [Status.ALREADY_EXISTS]: 'conflict',
  [Status.FAILED_PRECONDITION]: 'conflict',
  // gRPC raises RESOURCE_EXHAUSTED itself when a message exceeds the size limit.
  [Status.RESOURCE_EXHAUSTED]: 'payload_too_large',
  [Status.UNAVAILABLE]: 'unavailable',
  [Status.DEADLINE_EXCEEDED]: 'unavailable',
  // A server that was shut down by force cancels its calls.
  [Status.CANCELLED]: 'unavailable',
};

const isErrorKind = (value: string): value is ErrorKind => Object.hasOwn(STATUS_OF_KIND, value);

/** The error a server throws for an AppError: its status, its message, and its kind and violations as details. */
export const serverErrorOf = (error: AppError): RichServerError => {
  const details: ErrorDetails[] = [
    ErrorInfo.fromPartial({ domain: ERROR_DOMAIN, reason: error.kind.toUpperCase() }),
  ];
  if (error.violations.length > 0) {
    details.push(
      BadRequest.fromPartial({
        fieldViolations: error.violations.map(({ path, message }) => ({ field: path, description: message })),
      }),
    );
  }
  return new RichServerError(STATUS_OF_KIND[error.kind], error.message, details);
};

/**
 * The AppError a client raises for a failed call, or undefined when the status has no kind. The message is the
 * server's own only when one of our servers raised the AppError on purpose; otherwise it names the method and
 * the status, so transport details (addresses, socket errors) stay in `cause`.
 */
export const appErrorOf = (error: ClientError): AppError | undefined => {
  const details = error instanceof RichClientError ? error.extra : [];
  const reason = details.find(
    (detail): detail is ErrorInfo => detail.$type === ErrorInfo.$type && detail.domain === ERROR_DOMAIN,
  )?.reason;
  const kindFromServer = reason === undefined ? undefined : reason.toLowerCase();
  if (kindFromServer !== undefined && isErrorKind(kindFromServer)) {
    const violations: FieldViolation[] = details
      .filter((detail): detail is BadRequest => detail.$type === BadRequest.$type)
      .flatMap((badRequest) =>
        badRequest.fieldViolations.map(({ field, description }) => ({ path: field, message: description })),
      );
    return new AppError(kindFromServer, error.details, violations, { cause: error });
  }
  const kind = KIND_OF_BARE_STATUS[error.code];
  if (kind === undefined) return undefined;
  return new AppError(kind, `${error.path} failed: ${Status[error.code]}`, [], { cause: error });
};
