export * from './decider.js';
export * from './decider.specification.js';
export * from './event-store.port.js';
export { eventStoreMigrations } from './event-store.migrations.js';
export { onEventsAppended } from './events-appended.js';
export { createPostgresEventStore, type PostgresEventStoreOptions } from './postgres.event-store.js';
export { handleCommand, type CommandResult, type HandleCommandOptions } from './handle-command.js';
export {
  cloudEventHeaders,
  cloudEventTypeOf,
  toLogMessage,
  type DecodedEvent,
  type EncodedEvent,
  type EventEncoder,
} from './outbox-message.js';
export { startOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from './outbox-relay.js';
export {
  DEFAULT_DEDUP_WINDOW_MS,
  StaleProjectionOwnerError,
  eventIdOf,
  projectionMigrations,
  startProjection,
  type BatchEvent,
  type ProjectionApply,
  type ProjectionOptions,
} from './projection.js';
export { isActorKind, parseActor } from './actor.js';
export {
  canonicalJson,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
  IDEMPOTENCY_KEY_RETENTION_MS,
  idempotencyConflict,
  idempotencyKeyProblem,
  idempotencyScopeOf,
  idempotentRequestOf,
  requestHashOf,
  type IdempotencyScope,
  type IdempotentRequest,
} from './idempotency.js';
export {
  IdempotencyKeys,
  IdempotencyKeysTaken,
  idempotencyKeysMigration,
  type IdempotencyKeyEntry,
  type CreateOnceSteps,
  type RecordIdempotencyKey,
} from './idempotency-keys.js';
