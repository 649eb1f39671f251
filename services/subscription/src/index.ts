export * from './subscription.service.js';
export { loadOrCreateSigningSecret, signingSecretPathOf } from './adapters/signing-secret.js';
export { WEBHOOK_HEADERS } from './domain/webhook-signature.js';
