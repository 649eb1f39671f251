export * from './seller-contacts.js';
