export * from './database.port.js';
