import type { EventLog } from '../src/eventlog.port.js';

/**
 * Wraps a client to remember every topic a test touched, so the test file can delete them from a shared broker
 * afterwards.
 */
export const topicRecorder = () => {
  const topics = new Set<string>();
  const record = (log: EventLog): EventLog => ({
    publish: (topic, messages) => {
      topics.add(topic);
      return log.publish(topic, messages);
    },
    consume: (options) => {
      topics.add(options.topic);
      return log.consume(options);
    },
    follow: (options) => {
      topics.add(options.topic);
      return log.follow(options);
    },
    deleteGroup: (topic, group) => {
      topics.add(topic);
      return log.deleteGroup(topic, group);
    },
    close: () => log.close(),
  });
  return { topics, record };
};
