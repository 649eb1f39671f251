export * from './subscription.service.js';
