import { beforeEach, describe, expect, it } from '@jest/globals';
import { isAppError } from '@marketplace/platform';
import { handleCommand, WrongExpectedVersionError } from '../src/index.js';
import { InMemoryEventStore } from './support/in-memory.event-store.js';
import { stockCommand, stockDecider, type StockCommand } from './support/stock.decider.js';

describe('handleCommand', () => {
  let store: InMemoryEventStore;
  const handle = (command: StockCommand, retryOnConflict?: number) =>
    handleCommand({
      store,
      decider: stockDecider,
      streamId: 'stock_1',
      streamType: 'stock',
      command,
      retryOnConflict,
    });
  /** Another writer appends to the stream just before each of the next `times` appends. */
  const interfere = (times: number) => {
    let left = times;
    store.beforeAppend = async () => {
      if (left-- <= 0) return;
      const stream = await store.readStream('stock_1');
      store.streams.set('stock_1', [
        ...stream.events,
        { ...stream.events[0]!, eventId: `rival-${left}`, version: stream.version + 1 },
      ]);
    };
  };

  beforeEach(() => {
    store = new InMemoryEventStore();
  });

  it('appends the first events of a stream expecting no stream, with the command metadata', async () => {
    const command = stockCommand('AddStock', 5);
    const result = await handle({ ...command, metadata: { ...command.metadata, correlationId: 'c-1' } });

    expect(result.state).toEqual({ quantity: 5 });
    expect(result.version).toBe(1);
    expect(result.events.map(({ type, data, version }) => ({ type, data, version }))).toEqual([
      { type: 'StockAdded', data: { quantity: 5 }, version: 1 },
    ]);
    expect(store.appends[0]).toMatchObject({
      streamId: 'stock_1',
      streamType: 'stock',
      expectedVersion: 'no_stream',
      now: command.metadata.now,
      metadata: { actor: command.metadata.actor, correlationId: 'c-1' },
    });
  });

  it('decides a new stream on the initial state without reading it', async () => {
    const result = await handleCommand({
      store,
      decider: stockDecider,
      streamId: 'stock_1',
      streamType: 'stock',
      command: stockCommand('AddStock', 5),
      newStream: true,
    });

    expect(result).toMatchObject({ state: { quantity: 5 }, version: 1 });
    expect(store.reads).toBe(0);
    expect(store.appends.map((append) => append.expectedVersion)).toEqual(['no_stream']);
  });

  it("hands the decided state and the stream's next version to the companion write", async () => {
    await handle(stockCommand('AddStock', 5));
    const decided: unknown[] = [];
    await handleCommand({
      store,
      decider: stockDecider,
      streamId: 'stock_1',
      streamType: 'stock',
      command: stockCommand('AddStock', 2),
      companion: (row) => {
        decided.push(row);
        return { sql: () => 'update stock_levels set quantity = quantity', params: [] };
      },
    });

    expect(decided).toEqual([{ state: { quantity: 7 }, version: 2 }]);
    const companion = store.appends[1]?.companion;
    expect(
      companion && 'sql' in companion ? companion.sql({ whenAppended: 'true', firstParam: 8 }) : undefined,
    ).toBe('update stock_levels set quantity = quantity');
  });

  it('refuses a "new" stream that exists, and on a retry reads it and decides again', async () => {
    await handle(stockCommand('AddStock', 5));
    const handleAsNew = (retryOnConflict: number) =>
      handleCommand({
        store,
        decider: stockDecider,
        streamId: 'stock_1',
        streamType: 'stock',
        command: stockCommand('AddStock', 2),
        newStream: true,
        retryOnConflict,
      });

    await expect(handleAsNew(0)).rejects.toBeInstanceOf(WrongExpectedVersionError);
    expect(await handleAsNew(1)).toMatchObject({ state: { quantity: 7 }, version: 2 });
  });

  it('decides against the folded stream and expects the version it read', async () => {
    await handle(stockCommand('AddStock', 5));
    await handle(stockCommand('AddStock', 2));
    const result = await handle(stockCommand('RemoveStock', 6));

    expect(result).toMatchObject({ state: { quantity: 1 }, version: 3 });
    expect(store.appends.map((append) => append.expectedVersion)).toEqual(['no_stream', 1, 2]);
  });

  it('appends nothing when the decider decides nothing changes', async () => {
    await handle(stockCommand('AddStock', 5));
    const result = await handle(stockCommand('AddStock', 0));

    expect(result).toEqual({ state: { quantity: 5 }, events: [], version: 1 });
    expect(store.appends).toHaveLength(1);
  });

  it("rethrows the decider's error and appends nothing", async () => {
    const error: unknown = await handle(stockCommand('RemoveStock', 1)).catch((thrown: unknown) => thrown);
    expect(isAppError(error) && error.kind).toBe('conflict');
    expect(store.appends).toHaveLength(0);
  });

  it('reports a conflict without retrying by default', async () => {
    await handle(stockCommand('AddStock', 5));
    interfere(1);
    await expect(handle(stockCommand('AddStock', 1))).rejects.toBeInstanceOf(WrongExpectedVersionError);
  });

  it('re-reads and decides again on a conflict, within the retries allowed', async () => {
    await handle(stockCommand('AddStock', 5));
    interfere(2);
    const result = await handle(stockCommand('AddStock', 1), 2);

    // Two rival events (copies of the first, +5 each) came in between: 5 + 5 + 5 + 1.
    expect(result).toMatchObject({ state: { quantity: 16 }, version: 4 });
  });

  it('gives up with the conflict once the retries are spent', async () => {
    await handle(stockCommand('AddStock', 5));
    interfere(3);
    await expect(handle(stockCommand('AddStock', 1), 2)).rejects.toBeInstanceOf(WrongExpectedVersionError);
  });

  it('refuses a retry count that is not a non-negative integer', async () => {
    await expect(handle(stockCommand('AddStock', 1), -1)).rejects.toThrow(RangeError);
  });
});
