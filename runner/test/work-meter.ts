import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  TraceFlags,
  type Context,
  type ContextManager,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Database, Queryable, Row } from '@marketplace/database';

/** The work one operation caused, summed over every service it reached. */
export interface WorkCount {
  /** SQL statements sent (each a round trip), inside and outside transactions. */
  statements: number;
  /** Transactions committed (each adds BEGIN and COMMIT). */
  commits: number;
  /** gRPC calls between the gateway and the services, or between services (health checks excluded). */
  grpcCalls: number;
  /** Messages published to the event log (the outbox relay's PRODUCER spans). */
  messagesPublished: number;
  /** Messages handled by a consumer group (CONSUMER spans), one per group that receives the event. */
  messagesConsumed: number;
}

const zero = (): WorkCount => ({
  statements: 0,
  commits: 0,
  grpcCalls: 0,
  messagesPublished: 0,
  messagesConsumed: 0,
});

/** The OpenTelemetry API's context, kept in an AsyncLocalStorage so it follows every await. */
class AsyncLocalContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    active: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(active, () => fn.apply(thisArg, args));
  }
  bind<T>(active: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => this.with(active, fn, undefined, ...args)) as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/**
 * Counts the work of operations by their trace. Each measured request carries its own `traceparent`; the
 * marketplace's own instrumentation (`@marketplace/telemetry`) carries that trace through the gRPC hops, the
 * outbox (the event keeps the command's traceparent) and the consumers. This meter is the tracer those spans
 * are opened with: it records no timings, only which work ran under which trace. Statements and commits are
 * counted by a decorator on the Database port, under the trace active when they were sent.
 *
 * Background loops (pollers, heartbeats, readiness checks, the relay's reads and checkpoints, the consumers'
 * fetches and acknowledgements) run outside any trace: they cost per second or per batch, not per operation, so
 * the counts do not move with the machine's speed.
 */
export class WorkMeter {
  readonly #counts = new Map<string, WorkCount>();
  readonly #journals = new Map<string, string[]>();

  /** Registers the meter as the process's tracer, context manager and W3C propagator. */
  install(): void {
    context.setGlobalContextManager(new AsyncLocalContextManager());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(this.#tracerProvider());
  }

  /** A fresh trace: its id, and the `traceparent` header that starts it. */
  newTrace(): { traceId: string; traceparent: string } {
    const traceId = randomBytes(16).toString('hex');
    return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  }

  /** What the trace has caused so far. */
  countOf(traceId: string): WorkCount {
    return { ...(this.#counts.get(traceId) ?? zero()) };
  }

  /**
   * What the trace sent to the database, in order: each statement as its first 100 characters on one line, and
   * `BEGIN` and `COMMIT` around the transactions.
   */
  journalOf(traceId: string): string[] {
    return [...(this.#journals.get(traceId) ?? [])];
  }

  /** Wraps `db` so its statements and commits are counted under the trace active when each was sent. */
  countingDatabase(db: Database): Database {
    const statement = <R extends Row>(q: Queryable, sql: string, params?: readonly unknown[]) => {
      this.#record(this.#add('statements'), sql.replace(/\s+/g, ' ').trim().slice(0, 100));
      return q.query<R>(sql, params);
    };
    return {
      engine: db.engine,
      query: (sql, params) => statement(db, sql, params),
      transaction: async (work, options) => {
        this.#record(this.#activeTrace(), 'BEGIN');
        const result = await db.transaction(
          (tx) => work({ query: (sql, params) => statement(tx, sql, params) }),
          options,
        );
        this.#record(this.#add('commits'), 'COMMIT');
        return result;
      },
      listen: (channel, onNotify) => db.listen(channel, onNotify),
      withAdvisoryLock: (key, work, options) => db.withAdvisoryLock(key, work, options),
      afterCommit: (callback) => db.afterCommit(callback),
      close: () => db.close(),
    };
  }

  /** The id of the active trace; undefined outside one. */
  #activeTrace(): string | undefined {
    const traceId = trace.getSpanContext(context.active())?.traceId;
    return traceId === INVALID_SPAN_CONTEXT.traceId ? undefined : traceId;
  }

  #record(traceId: string | undefined, entry: string): void {
    if (traceId === undefined) return;
    const journal = this.#journals.get(traceId) ?? [];
    journal.push(entry);
    this.#journals.set(traceId, journal);
  }

  /** Counts `what` under `traceId` (default: the active trace); returns the trace, undefined outside one. */
  #add(what: keyof WorkCount, traceId = this.#activeTrace()): string | undefined {
    if (traceId === undefined) return undefined;
    const counts = this.#counts.get(traceId) ?? zero();
    counts[what]++;
    this.#counts.set(traceId, counts);
    return traceId;
  }

  #tracerProvider(): TracerProvider {
    const startSpan = (_name: string, options: SpanOptions = {}, parent = context.active()): Span => {
      const parentSpan = trace.getSpanContext(parent);
      // Work outside any measured trace (background loops) opens no trace of its own.
      if (!parentSpan || parentSpan.traceId === INVALID_SPAN_CONTEXT.traceId)
        return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
      const { traceId } = parentSpan;
      if (options.kind === SpanKind.CLIENT) this.#add('grpcCalls', traceId);
      if (options.kind === SpanKind.PRODUCER) this.#add('messagesPublished', traceId);
      if (options.kind === SpanKind.CONSUMER) this.#add('messagesConsumed', traceId);
      return trace.wrapSpanContext({
        traceId,
        spanId: randomBytes(8).toString('hex'),
        traceFlags: TraceFlags.SAMPLED,
      });
    };
    const tracer: Tracer = {
      startSpan,
      startActiveSpan: <F extends (span: Span) => unknown>(
        name: string,
        ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]
      ): ReturnType<F> => {
        const fn = rest.at(-1) as F;
        const options = rest.length > 1 ? (rest[0] as SpanOptions) : {};
        const parent = rest.length > 2 ? (rest[1] as Context) : context.active();
        const span = startSpan(name, options, parent);
        return context.with(trace.setSpan(parent, span), () => fn(span)) as ReturnType<F>;
      },
    };
    return { getTracer: () => tracer };
  }
}
