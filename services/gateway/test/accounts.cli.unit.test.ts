import { describe, expect, it } from '@jest/globals';
import { runAccountsCli } from '../src/contexts/identity/accounts.cli.js';

interface Sent {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}

interface Answer {
  readonly env?: Record<string, string>;
  readonly status?: number;
  readonly body?: string;
}

/** Runs the CLI against a recording fetch that answers `status` with `body`. */
const run = async (
  argv: string[],
  { env = { ADMIN_TOKEN: 'admin-token-0123456789' }, status = 201, body = '{"account_id":1}' }: Answer = {},
) => {
  const sent: Sent[] = [];
  let stdout = '';
  let stderr = '';
  const fakeFetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    sent.push({
      url: input instanceof Request ? input.url : String(input),
      method: init?.method ?? 'GET',
      headers: init?.headers as Record<string, string>,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    return new Response(status === 204 ? null : body, { status });
  }) as typeof fetch;
  const code = await runAccountsCli(argv, {
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    fetch: fakeFetch,
  });
  return { code, sent, stdout, stderr };
};

describe('accounts CLI', () => {
  it('creates an account through the admin API with the bearer token', async () => {
    const { code, sent, stdout } = await run([
      'create',
      '--role',
      'seller',
      '--name',
      'Tarnwick',
      '--email',
      'ops@tarnwick.test',
      '--country',
      'DE',
    ]);
    expect(code).toBe(0);
    expect(sent).toEqual([
      {
        url: 'http://localhost:8080/api/admin/accounts',
        method: 'POST',
        headers: { authorization: 'Bearer admin-token-0123456789', 'content-type': 'application/json' },
        body: { role: 'seller', name: 'Tarnwick', email: 'ops@tarnwick.test', country: 'DE' },
      },
    ]);
    expect(stdout).toContain('"account_id":1');
  });

  it('accepts a leading "accounts" word and MARKETPLACE_URL', async () => {
    const { sent } = await run(['accounts', 'add-key', '7'], {
      env: { ADMIN_TOKEN: 't'.repeat(16), MARKETPLACE_URL: 'https://market.test' },
    });
    expect(sent[0]).toMatchObject({
      url: 'https://market.test/api/admin/accounts/7/api-keys',
      method: 'POST',
    });
  });

  it('revokes a key by prefix', async () => {
    const { code, sent, stdout } = await run(['revoke-key', 'lmk_abcdefgh'], { status: 204 });
    expect(code).toBe(0);
    expect(sent[0]).toMatchObject({
      url: 'http://localhost:8080/api/admin/api-keys/lmk_abcdefgh',
      method: 'DELETE',
    });
    expect(stdout).toBe('revoked lmk_abcdefgh\n');
  });

  it.each([
    [[], 'missing command'],
    [['frobnicate'], 'unknown command frobnicate'],
    [['create', '--role', 'seller'], 'create needs --role, --name and --email'],
    [
      ['create', '--role', 'seller', '--name', 'n', '--email', 'e', '--colour', 'red'],
      "Unknown option '--colour'",
    ],
    [['add-key'], 'add-key needs an ACCOUNT_ID'],
    [['add-key', 'abc'], 'not an account id: abc'],
    [['add-key', '1', '2'], 'unexpected argument 2'],
    [['revoke-key'], 'revoke-key needs a KEY_PREFIX'],
  ])('exits 2 with usage for %p', async (argv, message) => {
    const { code, sent, stderr } = await run(argv);
    expect(code).toBe(2);
    expect(sent).toEqual([]);
    expect(stderr).toContain(message);
    expect(stderr).toContain('usage:');
  });

  it('exits 2 without ADMIN_TOKEN, before calling anything', async () => {
    const { code, sent, stderr } = await run(['add-key', '1'], { env: {} });
    expect(code).toBe(2);
    expect(sent).toEqual([]);
    expect(stderr).toContain('ADMIN_TOKEN is not set');
  });

  it('exits 1 and prints the problem, field by field, when the marketplace refuses', async () => {
    const problem = {
      title: 'Invalid request',
      status: 400,
      detail: 'invalid account',
      errors: [{ path: 'country', message: 'must be an ISO 3166-1 alpha-2 country code' }],
    };
    const { code, stderr } = await run(['create', '--role', 'buyer', '--name', 'n', '--email', 'e@x.test'], {
      status: 400,
      body: JSON.stringify(problem),
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      'error: 400 Invalid request: invalid account\n  country: must be an ISO 3166-1 alpha-2 country code\n',
    );
  });
});
