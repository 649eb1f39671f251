export * from './quote.service.js';
