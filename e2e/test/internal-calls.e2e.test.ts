import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loopbackListeningPorts } from '../src/harness/processes.js';
import { sharedMarketplace, type E2eMarketplace } from '../src/harness/shared-marketplace.js';

/**
 * `pnpm start` serves each service in process (docs/architecture.md, "In-process calls"): no port of the process
 * but the gateway's reaches a service, so no local process can call one, with or without a token
 * (docs/security.md, "Internal calls"). rpc `internal-auth.int` holds the token checks on a port, as in a cluster.
 */
describe('internal gRPC in embedded mode', () => {
  let marketplace: E2eMarketplace;

  beforeAll(async () => {
    marketplace = await sharedMarketplace();
  }, 120_000);

  afterAll(async () => {
    await marketplace?.stop();
  });

  it('listens on no loopback port but the gateway’s', async () => {
    const gatewayPort = Number(new URL(marketplace.client.baseUrl).port);
    const ports = await loopbackListeningPorts(marketplace.pid);
    expect(ports).toEqual([gatewayPort]);
  });
});
