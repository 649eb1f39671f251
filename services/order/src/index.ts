export * from './order.service.js';
