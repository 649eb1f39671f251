export * from './decider.js';
export * from './event-store.port.js';
