import { STATUS_CODES } from 'node:http';
import type { Response } from 'express';
import type { ErrorKind, FieldViolation } from '@marketplace/platform';
import { isAppError } from '@marketplace/platform';

/**
 * RFC 9457 problem details. Every error the gateway answers is one of these, with a `type` URI under
 * `{base_url}/problems/` that resolves to a description of the problem type (see `problems.routes.ts`).
 */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  /** A stable code for the problems clients act on by protocol (ACP's `idempotency_conflict`). */
  readonly code?: string;
  /** Validation failures: one entry per offending field or parameter. */
  readonly errors?: readonly FieldViolation[];
}

export interface ProblemType {
  readonly status: number;
  readonly title: string;
  readonly description: string;
  /** Sent as the problem's `code` member. */
  readonly code?: string;
}

export const PROBLEM_TYPES = {
  'validation-error': {
    status: 400,
    title: 'Invalid request',
    description: 'A field or parameter is missing, malformed or out of range; `errors` names each one.',
  },
  'malformed-json': {
    status: 400,
    title: 'Malformed JSON',
    description: 'The request body is not valid JSON.',
  },
  unauthenticated: {
    status: 401,
    title: 'Authentication required',
    description: 'The request needs a valid credential: X-MCP-API-Key, or a Bearer token for the admin API.',
  },
  forbidden: {
    status: 403,
    title: 'Not allowed',
    description:
      'The credential is valid but its account may not do this (for example a buyer key publishing).',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    description: 'No resource or route exists at this address.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    description: 'The route exists but not with this method; the Allow header lists the methods it takes.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    description: 'The request conflicts with the current state of the resource; read it again and retry.',
  },
  'precondition-failed': {
    status: 412,
    title: 'Precondition failed',
    description:
      'The If-Match header names a version the resource is no longer at: someone changed it since you read it. ' +
      'Read it again (its ETag is the current version), then send your change with that ETag.',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload too large',
    description: 'The request body is larger than the gateway accepts.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    description: 'The request body must be sent as application/json (UTF-8).',
  },
  'idempotency-conflict': {
    status: 422,
    title: 'Idempotency key reused',
    code: 'idempotency_conflict',
    description:
      'The Idempotency-Key (or idempotency_key) was already used for a different request by this caller. Repeat ' +
      'the first request exactly to get its result again, or send a new key for a new request.',
  },
  'rate-limited': {
    status: 429,
    title: 'Too many requests',
    description: 'The allowance for this client is used up; retry after the time in Retry-After.',
  },
  'internal-error': {
    status: 500,
    title: 'Internal error',
    description: 'The gateway failed unexpectedly; the fault is logged. Retrying may help.',
  },
  'service-unavailable': {
    status: 503,
    title: 'Service unavailable',
    description:
      'A service behind the gateway, or its database connection, is not available right now; retry after the time in Retry-After.',
  },
} as const satisfies Record<string, ProblemType>;

export type ProblemSlug = keyof typeof PROBLEM_TYPES;

export const isProblemSlug = (value: string): value is ProblemSlug => Object.hasOwn(PROBLEM_TYPES, value);

const SLUG_OF_KIND: Record<ErrorKind, ProblemSlug> = {
  validation: 'validation-error',
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  not_found: 'not-found',
  conflict: 'conflict',
  rate_limited: 'rate-limited',
  unavailable: 'service-unavailable',
  payload_too_large: 'payload-too-large',
  idempotency_conflict: 'idempotency-conflict',
  precondition_failed: 'precondition-failed',
};

/** A problem that only exists at the HTTP edge (415, 405...), where no AppError kind fits. */
export class HttpProblem extends Error {
  constructor(
    readonly slug: ProblemSlug,
    detail: string,
  ) {
    super(detail);
    this.name = 'HttpProblem';
  }
}

/** Builds problem documents whose `type` URIs point at this gateway's public address. */
export class Problems {
  constructor(private readonly publicBaseUrl: string) {}

  typeUri(slug: ProblemSlug): string {
    return `${this.publicBaseUrl}/problems/${slug}`;
  }

  of(slug: ProblemSlug, detail?: string, errors?: readonly FieldViolation[]): Problem {
    const type: ProblemType = PROBLEM_TYPES[slug];
    const { status, title, code } = type;
    return {
      type: this.typeUri(slug),
      title,
      status,
      ...(detail === undefined ? {} : { detail }),
      ...(code === undefined ? {} : { code }),
      ...(errors === undefined || errors.length === 0 ? {} : { errors }),
    };
  }

  /**
   * The problem for anything a handler threw that the client caused; undefined for a real internal fault
   * (the caller logs it and answers 500 without detail).
   */
  fromError(error: unknown): Problem | undefined {
    if (error instanceof HttpProblem) return this.of(error.slug, error.message);
    if (isAppError(error)) {
      return this.of(SLUG_OF_KIND[error.kind], error.message, error.violations);
    }
    return this.fromHttpError(error);
  }

  /** Errors raised by Express and body-parser: they carry a 4xx `status` and, for the body parser, a `type`. */
  private fromHttpError(error: unknown): Problem | undefined {
    if (typeof error !== 'object' || error === null || !('status' in error)) return undefined;
    const status = error.status;
    if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
    // Express's router could not percent-decode a path parameter: such an address names no resource.
    if (error instanceof URIError) {
      return this.of('not-found', 'no resource at this address: its path is not percent-encoded UTF-8');
    }
    const type = 'type' in error ? error.type : undefined;
    const message = error instanceof Error ? error.message : undefined;
    switch (type) {
      case 'entity.parse.failed':
        return this.of('malformed-json', `The request body is not valid JSON: ${message ?? 'parse error'}`);
      case 'entity.too.large':
        return this.of('payload-too-large', message);
      case 'charset.unsupported':
      case 'encoding.unsupported':
        return this.of('unsupported-media-type', message);
    }
    // Other client errors (an undecodable path, an aborted upload): the status says it all.
    return {
      type: 'about:blank',
      title: STATUS_CODES[status] ?? 'Client error',
      status,
      ...(message ? { detail: message } : {}),
    };
  }
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Seconds a client is asked to wait after a 503: what is unavailable (a restarting service, a lost database
 * connection) is expected back within moments. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** Sends the problem; a 503 says when to retry (unless the route already did). */
export const sendProblem = (res: Response, problem: Problem): void => {
  if (problem.status === 503 && !res.get('Retry-After')) {
    res.set('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  }
  res.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
};
