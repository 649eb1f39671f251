export {
  OutgoingMailTable,
  outgoingMailMigration,
  type ClaimedMail,
  type QueuedMail,
} from './outgoing-mail.table.js';
export {
  DEFAULT_RETRY_DELAYS_MS,
  retryDelayAfter,
  startOutgoingMailWorker,
  type OutgoingMailWorker,
  type OutgoingMailWorkerOptions,
} from './outgoing-mail.worker.js';
