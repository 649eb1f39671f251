export * from './infrastructure.config.js';
export * from './lifecycle.js';
export * from './namespaced-event-log.js';
