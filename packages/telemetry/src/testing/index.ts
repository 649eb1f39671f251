export * from './otlp-receiver.js';
