import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Secrets never reach a log line: the paths below are censored wherever they appear,
 * and callers log principals by account id, never by key or token.
 */
export const REDACTED_PATHS = [
  'apiKey',
  'api_key',
  'token',
  'password',
  'secret',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.password',
  '*.secret',
  'req.headers["x-mcp-api-key"]',
  'req.headers["x-agent-token"]',
  'req.headers.authorization',
  'headers["x-mcp-api-key"]',
  'headers["x-agent-token"]',
  'headers.authorization',
  // What a database error carries of the statement's data (docs/security.md): PGlite attaches the bound
  // parameters, PostgreSQL's `detail` and `where` quote values (`Key (email)=(…) already exists`).
  'err.params',
  'err.detail',
  'err.where',
  'err.cause.params',
  'err.cause.detail',
  'err.cause.where',
];

export interface LoggerOptions {
  readonly service: string;
  readonly level?: string;
  /** Where lines go; standard output by default. */
  readonly destination?: DestinationStream;
}

/** The active span's ids on every line, so logs and traces join (nothing when tracing is off). */
const traceFields = (): Record<string, string> => {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
};

export const createLogger = ({ service, level, destination }: LoggerOptions): Logger =>
  pino(
    {
      mixin: traceFields,
      name: service,
      level: level ?? process.env['LOG_LEVEL'] ?? (process.env['NODE_ENV'] === 'test' ? 'silent' : 'info'),
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
