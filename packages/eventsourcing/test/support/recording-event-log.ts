import type {
  DeliveredMessage,
  EventLog,
  LogMessage,
  ConsumeOptions,
  FollowOptions,
  LogConsumer,
} from '@marketplace/eventlog';

export interface PublishedMessage extends LogMessage {
  readonly topic: string;
}

/**
 * A double of the EventLog port for the relay's tests: it records what was published, and can be told to
 * refuse publishing (the broker is down) until told otherwise. It has no consumers.
 */
export class RecordingEventLog implements EventLog {
  readonly published: PublishedMessage[] = [];
  /** Each successful publish: when (performance.now()) and how many messages it carried. */
  readonly publishes: { readonly at: number; readonly messages: number }[] = [];
  publishAttempts = 0;
  #failure: Error | undefined;

  failPublishing(error = new Error('broker unavailable')): void {
    this.#failure = error;
  }

  recover(): void {
    this.#failure = undefined;
  }

  async publish(topic: string, messages: readonly LogMessage[]): Promise<void> {
    this.publishAttempts++;
    if (this.#failure) throw this.#failure;
    this.published.push(...messages.map((message) => ({ ...message, topic })));
    this.publishes.push({ at: performance.now(), messages: messages.length });
  }

  async consume(_options: ConsumeOptions): Promise<LogConsumer> {
    throw new Error('RecordingEventLog has no consumers');
  }

  async follow(_options: FollowOptions): Promise<LogConsumer> {
    throw new Error('RecordingEventLog has no followers');
  }

  async deleteGroup(_topic: string, _group: string): Promise<void> {
    throw new Error('RecordingEventLog has no groups');
  }

  async close(): Promise<void> {}
}

/** A message as a subscriber would receive it, for feeding a projection by hand. */
export const delivered = (message: PublishedMessage, offset: number): DeliveredMessage => ({
  ...message,
  partition: 0,
  offset: String(offset),
});
