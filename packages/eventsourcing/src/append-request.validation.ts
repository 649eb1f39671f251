import { unstorableTextReason } from '@marketplace/platform';
import type { DomainEvent } from './decider.js';
import type { AppendRequest } from './event-store.port.js';

/**
 * What an append must satisfy so that the relay can always publish it: the stream id becomes the log's message
 * key, the stream type part of a topic name, the event type part of the `ce_type` header. An event that broke
 * these rules would be refused by the log on every attempt and stop the relay, so it is refused here, at once.
 */
const STREAM_TYPE = /^[a-z][a-z0-9_]{0,62}$/;
const EVENT_TYPE = /^[A-Za-z][A-Za-z0-9_]{0,127}$/;
const MAX_STREAM_ID_LENGTH = 1024;

/** A NUL or a lone surrogate could not be stored as it was appended: the store would answer another id. */
const isKeySafe = (text: string): boolean =>
  text !== '' &&
  text.length <= MAX_STREAM_ID_LENGTH &&
  text === text.trim() &&
  !/[\r\n]/.test(text) &&
  unstorableTextReason(text) === undefined;

export const assertValidAppend = <E extends DomainEvent>(request: AppendRequest<E>): void => {
  const { streamId, streamType, expectedVersion, events, now } = request;
  if (typeof streamId !== 'string' || !isKeySafe(streamId)) {
    throw new TypeError(
      `invalid stream id ${JSON.stringify(streamId)}: expected non-empty text of at most ` +
        `${MAX_STREAM_ID_LENGTH} characters without line breaks, surrounding white space, NUL or lone surrogates`,
    );
  }
  if (!STREAM_TYPE.test(streamType)) {
    throw new TypeError(
      `invalid stream type ${JSON.stringify(streamType)}: expected a lower-case identifier`,
    );
  }
  if (
    expectedVersion !== 'any' &&
    expectedVersion !== 'no_stream' &&
    !(Number.isSafeInteger(expectedVersion) && expectedVersion >= 0)
  ) {
    throw new TypeError(`invalid expected version ${String(expectedVersion)}`);
  }
  if (!Number.isFinite(now)) throw new TypeError(`invalid append time ${now}`);
  for (const event of events) {
    if (!EVENT_TYPE.test(event.type)) {
      throw new TypeError(`invalid event type ${JSON.stringify(event.type)}: expected a PascalCase name`);
    }
    if (event.data === undefined) throw new TypeError(`event ${event.type} has no data`);
  }
};
