import { DEFAULT_MAX_BATCH, type LogMessage } from './eventlog.port.js';

/**
 * The checks every adapter applies before touching a broker, so a bad name or message fails the same clear way
 * everywhere instead of as a broker-specific error (or, worse, as a header that silently changes in transit).
 */
const TOKEN = '[A-Za-z0-9][A-Za-z0-9_-]*';
const TOPIC = new RegExp(`^${TOKEN}(\\.${TOKEN})*$`);
const GROUP = new RegExp(`^${TOKEN}$`);
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export const MAX_TOPIC_LENGTH = 200;
export const MAX_GROUP_LENGTH = 64;
export const MAX_KEY_LENGTH = 1024;

export const assertTopic = (topic: string): void => {
  if (typeof topic !== 'string' || topic.length > MAX_TOPIC_LENGTH || !TOPIC.test(topic)) {
    throw new TypeError(
      `invalid topic ${JSON.stringify(topic)}: expected dot-separated tokens of letters, digits, _ and -, ` +
        `at most ${MAX_TOPIC_LENGTH} characters`,
    );
  }
};

export const assertGroup = (group: string): void => {
  if (typeof group !== 'string' || group.length > MAX_GROUP_LENGTH || !GROUP.test(group)) {
    throw new TypeError(
      `invalid consumer group ${JSON.stringify(group)}: expected letters, digits, _ and -, ` +
        `at most ${MAX_GROUP_LENGTH} characters`,
    );
  }
};

export const assertPartitions = (partitions: number): void => {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 1024) {
    throw new RangeError(`invalid partition count ${partitions}: expected an integer from 1 to 1024`);
  }
};

/** The largest batch a consumer asks for (`ConsumeOptions.maxBatch`), default `DEFAULT_MAX_BATCH`. */
export const maxBatchOf = (maxBatch: number | undefined): number => {
  const value = maxBatch ?? DEFAULT_MAX_BATCH;
  if (!Number.isInteger(value) || value < 1 || value > 10_000) {
    throw new RangeError(`invalid maxBatch ${value}: expected an integer from 1 to 10000`);
  }
  return value;
};

/** Line breaks would end a NATS header line, and NATS trims surrounding white space from values. */
/** A time setting in milliseconds: an integer from `min` up to a day. */
export const assertDuration = (name: string, ms: number, min = 1): void => {
  if (!Number.isInteger(ms) || ms < min || ms > 86_400_000) {
    throw new RangeError(
      `invalid ${name} ${ms}: expected an integer number of milliseconds from ${min} to 86400000`,
    );
  }
};

const isHeaderSafe = (text: string): boolean => text === text.trim() && !/[\r\n]/.test(text);

export const assertMessages = (topic: string, messages: readonly LogMessage[]): void => {
  assertTopic(topic);
  const list: unknown = messages;
  if (!Array.isArray(list)) throw new TypeError(`messages for ${topic} must be an array`);
  messages.forEach((message, index) => {
    const where = `message ${index} for ${topic}`;
    const { key, value, headers } = message;
    if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH || !isHeaderSafe(key)) {
      throw new TypeError(
        `${where}: key must be non-empty text of at most ${MAX_KEY_LENGTH} characters without line breaks ` +
          'or surrounding white space',
      );
    }
    if (!(value instanceof Uint8Array)) throw new TypeError(`${where}: value must be a Uint8Array`);
    if (typeof headers !== 'object' || headers === null)
      throw new TypeError(`${where}: headers must be an object`);
    for (const [name, text] of Object.entries(headers)) {
      if (!HEADER_NAME.test(name)) {
        throw new TypeError(`${where}: invalid header name ${JSON.stringify(name)}`);
      }
      if (typeof text !== 'string' || !isHeaderSafe(text)) {
        throw new TypeError(
          `${where}: header ${name} must be text without line breaks or surrounding white space`,
        );
      }
    }
  });
};
