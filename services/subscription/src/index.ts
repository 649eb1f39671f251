export * from './subscription.service.js';
export { loadOrCreateSigningSecret, signingSecretPathOf } from './adapters/signing-secret.js';
export { WEBHOOK_HEADERS } from './adapters/webhook-signature.js';
