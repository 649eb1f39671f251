export * from './errors.js';
export * from './ids.js';
export * from './money.js';
export * from './clock.js';
export * from './logger.js';
export * from './config.js';
export * from './service.js';
export * from './text.js';
