export { describeEventLogContract, type EventLogContractTarget } from './eventlog.contract.js';
