import { afterAll, describe, jest } from '@jest/globals';
import { Kafka } from 'kafkajs';
import { createKafkaEventLog } from '../src/kafka.event-log.js';
import { describeEventLogContract } from '../src/testing/index.js';
import { topicRecorder } from './topic-recorder.js';

/**
 * The contract against a real Kafka broker. No broker can run on the development machines, so this runs only
 * where KAFKA_BROKERS names one (e.g. KAFKA_BROKERS=127.0.0.1:9092); kafka.unit.test.ts covers our use of the
 * kafkajs API everywhere.
 */
const brokers = (process.env['KAFKA_BROKERS'] ?? '')
  .split(',')
  .map((broker) => broker.trim())
  .filter((broker) => broker !== '');

// Consumer groups take seconds to (re)balance.
jest.setTimeout(120_000);

(brokers.length > 0 ? describe : describe.skip)('Kafka event log (KAFKA_BROKERS)', () => {
  const { topics, record } = topicRecorder();

  afterAll(async () => {
    if (topics.size === 0) return;
    const admin = new Kafka({ brokers, clientId: 'eventlog-contract-cleanup' }).admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [...topics] }).catch(() => undefined);
    await admin.disconnect();
  });

  describeEventLogContract('Kafka', {
    open: async () =>
      record(
        await createKafkaEventLog({
          brokers,
          clientId: 'eventlog-contract',
          partitions: 4,
          sessionTimeoutMs: 6_000,
          heartbeatIntervalMs: 500,
          retry: { initialDelayMs: 20, maxDelayMs: 200 },
        }),
      ),
    deliveryTimeoutMs: 60_000,
  });
});
