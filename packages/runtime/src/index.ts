export * from './grpc-listen.config.js';
export * from './infrastructure.config.js';
export * from './infrastructure.js';
export * from './lifecycle.js';
export * from './namespaced-event-log.js';
export * from './run-service.js';
export * from './startup-retry.js';
export * from './periodic-job.js';
