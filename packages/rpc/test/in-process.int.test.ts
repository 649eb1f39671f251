import { describe, expect, it } from '@jest/globals';
import type { ClientMiddleware } from 'nice-grpc';
import { IN_PROCESS_HOST } from '../src/index.js';
import { createInProcessClient } from '../src/in-process.js';
import { describeTransportContract, startTestServer } from './support/transport-contract.js';

/** What a raw client runs its calls through: nothing. */
const noMiddleware: ClientMiddleware = async function* (call, options) {
  return yield* call.next(call.request, options);
};

describeTransportContract({
  name: 'in process',
  host: IN_PROCESS_HOST,
  rawClient: (definition, address) => createInProcessClient(definition, address, noMiddleware, {}),
  // Addresses are numbered from 1 as servers start; this one is never reached.
  unreachableAddress: async () => `${IN_PROCESS_HOST}:999999`,
  handlerAborts: 'before the caller returns',
});

describe('a gRPC server served in process', () => {
  it('has an address of its own that no socket serves', async () => {
    const server = await startTestServer(IN_PROCESS_HOST);
    try {
      expect(server.address).toMatch(/^in-process:\d+$/);
    } finally {
      await server.shutdown(1_000);
    }
  });
});
