import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { ConsumeOptions, DeliveredBatch, EventLog, LogMessage } from '@marketplace/eventlog';
import { durationHistogram, secondsSince, tracer } from './instruments.js';

const messagingAttributes = (topic: string, headers: Readonly<Record<string, string>>) => ({
  'messaging.system': 'marketplace',
  'messaging.destination.name': topic,
  'messaging.message.id': headers['ce_id'] ?? '',
  'cloudevents.event_type': headers['ce_type'] ?? '',
});

const failed = (span: Span, error: unknown): void => {
  span.setStatus({ code: SpanStatusCode.ERROR });
  if (error instanceof Error) span.recordException(error);
};

/**
 * The handler of a consumer of `topic` (in `group`, absent for a follower), run in a CONSUMER span per batch and
 * timed.
 */
const tracedHandler =
  (topic: string, group: string | undefined, handler: ConsumeOptions['handler']): ConsumeOptions['handler'] =>
  (batch: DeliveredBatch) => {
    // A batch of one joins its message's trace; a longer batch starts its own, linked to each message's.
    const contexts = batch.messages.map((message) => propagation.extract(ROOT_CONTEXT, message.headers));
    const parent = contexts.length === 1 ? contexts[0]! : ROOT_CONTEXT;
    const links =
      contexts.length === 1
        ? []
        : contexts
            .map((context) => trace.getSpanContext(context))
            .filter((context) => context !== undefined)
            .map((context) => ({ context }));
    const groupAttribute = group === undefined ? {} : { 'messaging.consumer.group.name': group };
    const attributes = {
      ...messagingAttributes(topic, batch.messages.length === 1 ? batch.messages[0]!.headers : {}),
      ...groupAttribute,
      'messaging.batch.message_count': batch.messages.length,
    };
    return tracer().startActiveSpan(
      `process ${topic}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: { ...attributes, 'messaging.operation.type': 'process' },
        links,
      },
      parent,
      async (span) => {
        const startedAt = performance.now();
        let outcome = 'ok';
        try {
          await handler(batch);
        } catch (error) {
          outcome = 'error';
          failed(span, error);
          throw error;
        } finally {
          span.end();
          durationHistogram('messaging.process.duration', 'Duration of handling one delivered batch').record(
            secondsSince(startedAt),
            { 'messaging.destination.name': topic, ...groupAttribute, outcome },
          );
        }
      },
    );
  };

/**
 * Traces the event log. A message published with a `traceparent` (the outbox relay copies the one the command
 * carried into the event's metadata) gets a PRODUCER span under it, and its header is rewritten to that span;
 * a delivered batch's handler runs in a CONSUMER span, under the header's context when the batch is one message
 * (so whatever it does, its writes, its own publishes, its log lines, joins the trace) and linked to each
 * message's context otherwise; a follower's the same, without a group. `messaging.process.duration` records
 * each batch's handling.
 * Messages without a traceparent pass through untouched.
 */
export const tracedEventLog = (log: EventLog): EventLog => ({
  async publish(topic, messages) {
    const spans: Span[] = [];
    const traced = messages.map((message): LogMessage => {
      if (message.headers['traceparent'] === undefined) return message;
      const parent = propagation.extract(ROOT_CONTEXT, message.headers);
      const span = tracer().startSpan(
        `publish ${topic}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: { ...messagingAttributes(topic, message.headers), 'messaging.operation.type': 'send' },
        },
        parent,
      );
      spans.push(span);
      const headers = { ...message.headers };
      propagation.inject(trace.setSpan(parent, span), headers);
      return { ...message, headers };
    });
    try {
      await log.publish(topic, traced);
    } catch (error) {
      for (const span of spans) failed(span, error);
      throw error;
    } finally {
      for (const span of spans) span.end();
    }
  },

  consume: (options) =>
    log.consume({ ...options, handler: tracedHandler(options.topic, options.group, options.handler) }),

  follow: (options) =>
    log.follow({ ...options, handler: tracedHandler(options.topic, undefined, options.handler) }),

  deleteGroup: (topic, group) => log.deleteGroup(topic, group),

  close: () => log.close(),
});
