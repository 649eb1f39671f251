export * from './eventlog.port.js';
export { DEFAULT_RETRY_POLICY, retryDelayMs, type RetryPolicy } from './delivery.js';
export {
  createNatsEventLog,
  durableNameOf,
  streamNameOf,
  subjectOf,
  type NatsEventLogOptions,
} from './nats.event-log.js';
export { createKafkaEventLog, type KafkaClient, type KafkaEventLogOptions } from './kafka.event-log.js';
export { createEmbeddedEventLog, type EmbeddedEventLogOptions } from './embedded.event-log.js';
export { EMBEDDED_EVENT_LOG_MIGRATIONS } from './embedded.schema.js';
export { pause, TimeoutError, withTimeout } from './timing.js';
export { WakeUp } from './wake-up.js';
