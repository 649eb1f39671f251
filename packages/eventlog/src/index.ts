export * from './eventlog.port.js';
