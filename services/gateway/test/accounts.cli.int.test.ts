import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { testEngines } from '@marketplace/database/testing';
import { runAccountsCli } from '../src/contexts/identity/accounts.cli.js';
import { ADMIN_TOKEN, CapturedLog, TestGateway, backendsAt } from './support/gateway-harness.js';
import { InMemoryBackends } from './support/in-memory-backends.js';

const [engine] = testEngines();

/** The CLI over real HTTP against a running gateway; the admin API itself is covered elsewhere. */
describe('accounts CLI against a gateway', () => {
  let db: Database;
  let backends: InMemoryBackends;
  let gateway: TestGateway;

  beforeAll(async () => {
    db = await engine!.create();
    backends = await InMemoryBackends.start(new CapturedLog().logger);
    gateway = await TestGateway.start(db, {
      services: backendsAt(backends.address),
      adminToken: ADMIN_TOKEN,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backends?.stop();
    await db?.close();
  });

  const cli = async (argv: string[], adminToken = ADMIN_TOKEN) => {
    let stdout = '';
    let stderr = '';
    const code = await runAccountsCli(argv, {
      env: { ADMIN_TOKEN: adminToken, MARKETPLACE_URL: gateway.baseUrl },
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    });
    return { code, stdout, stderr };
  };

  const publishWith = (apiKey: string) =>
    gateway.postJson('/api/products', { name: 'CLI lot', description: 'x' }, { 'x-mcp-api-key': apiKey });

  it('creates an account, adds a key and revokes the first one', async () => {
    const created = await cli([
      'create',
      '--role',
      'seller',
      '--name',
      'Brindlewood',
      '--email',
      'b@example.test',
    ]);
    expect(created).toMatchObject({ code: 0 });
    const account = JSON.parse(created.stdout) as {
      account_id: number;
      api_key: string;
      api_key_prefix: string;
    };
    expect((await publishWith(account.api_key)).status).toBe(201);

    const added = await cli(['add-key', String(account.account_id)]);
    expect(added.code).toBe(0);
    const second = JSON.parse(added.stdout) as { api_key: string };

    const revoked = await cli(['revoke-key', account.api_key_prefix]);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${account.api_key_prefix}\n` });
    // The gateway had the key cached; the CLI's revocation reaches it by notification (docs/security.md).
    const revokedBy = Date.now() + 2_000;
    let status = (await publishWith(account.api_key)).status;
    while (status !== 401 && Date.now() < revokedBy) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      status = (await publishWith(account.api_key)).status;
    }
    expect(status).toBe(401);
    expect((await publishWith(second.api_key)).status).toBe(201);
  });

  it('reports the validation problem field by field and exits 1', async () => {
    const refused = await cli([
      'create',
      '--role',
      'seller',
      '--name',
      'X',
      '--email',
      'nope',
      '--country',
      'ZZ',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: 400 Invalid request');
    expect(refused.stderr).toContain('email: must be an email address');
    expect(refused.stderr).toContain('country: must be an ISO 3166-1 alpha-2 country code');
  });

  it('exits 1 with the 401 when the admin token is wrong', async () => {
    const refused = await cli(['add-key', '1'], 'not-the-admin-token');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: 401');
  });

  it('exits 1 when the marketplace cannot be reached', async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    let stderr = '';
    const code = await runAccountsCli(['add-key', '1'], {
      env: { ADMIN_TOKEN, MARKETPLACE_URL: `http://127.0.0.1:${port}` },
      stdout: { write: () => true },
      stderr: { write: (text: string) => (stderr += text) },
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      `error: the marketplace is not reachable at http://127.0.0.1:${port} (ECONNREFUSED): start it with ` +
        '`ADMIN_TOKEN=… pnpm start`, or set MARKETPLACE_URL to where it listens (PORT, HOST)\n',
    );
  });

  it('says the admin API is off when the gateway runs without ADMIN_TOKEN', async () => {
    const withoutAdmin = await TestGateway.start(db, {
      services: backendsAt(backends.address),
    });
    try {
      for (const argv of [
        ['add-key', '1'],
        ['create', '--role', 'buyer', '--name', 'B', '--email', 'b@x.test'],
      ]) {
        let stderr = '';
        const code = await runAccountsCli(argv, {
          env: { ADMIN_TOKEN, MARKETPLACE_URL: withoutAdmin.baseUrl },
          stdout: { write: () => true },
          stderr: { write: (text: string) => (stderr += text) },
        });
        expect(code).toBe(1);
        expect(stderr).toBe(
          'error: the admin API is off: start the marketplace with ADMIN_TOKEN set (the same value as here)\n',
        );
      }
    } finally {
      await withoutAdmin.stop();
    }
  });
});
