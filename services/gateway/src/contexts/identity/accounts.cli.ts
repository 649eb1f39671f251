import { parseArgs } from 'node:util';
import { DEFAULT_PUBLIC_BASE_URL } from '@marketplace/platform';
import { callMarketplace, describeRefusal } from '../../edge/cli/marketplace-http.js';

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  /** Injected by tests; the global fetch otherwise. */
  readonly fetch?: typeof fetch;
}

export const ACCOUNTS_USAGE = `usage:
  accounts create --role seller|buyer --name NAME --email EMAIL [--company COMPANY] [--country CC]
  accounts add-key ACCOUNT_ID
  accounts revoke-key KEY_PREFIX
Calls the admin API at MARKETPLACE_URL (default http://localhost:8080) with Authorization: Bearer $ADMIN_TOKEN.
`;

/** Exit statuses: 0 done, 1 the marketplace refused or could not be reached, 2 a usage error. */
const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

class UsageError extends Error {}

/** node:util parseArgs reports unknown options and missing values as errors with an ERR_PARSE_ARGS code. */
const isParseArgsError = (error: unknown): error is { message: string } =>
  typeof error === 'object' &&
  error !== null &&
  'code' in error &&
  String(error.code).startsWith('ERR_PARSE_ARGS') &&
  'message' in error &&
  typeof error.message === 'string';

interface AdminCall {
  readonly method: 'POST' | 'DELETE';
  readonly path: string;
  readonly body?: Record<string, string>;
}

/**
 * The operators' account commands over the admin API. `argv` holds the words after `marketplace accounts`
 * (a leading `accounts` is accepted too). Resolves to the exit status; never throws for bad input.
 */
export const runAccountsCli = async (argv: readonly string[], io: CliIo): Promise<number> => {
  let call: AdminCall;
  try {
    call = adminCallOf(argv[0] === 'accounts' ? argv.slice(1) : argv);
  } catch (error) {
    if (!(error instanceof UsageError) && !isParseArgsError(error)) throw error;
    io.stderr.write(`error: ${error.message}\n${ACCOUNTS_USAGE}`);
    return EXIT.usage;
  }
  const adminToken = io.env['ADMIN_TOKEN'];
  if (!adminToken) {
    io.stderr.write('error: ADMIN_TOKEN is not set; it must match the marketplace’s ADMIN_TOKEN\n');
    return EXIT.usage;
  }
  const baseUrl = io.env['MARKETPLACE_URL'] || DEFAULT_PUBLIC_BASE_URL;
  let url: URL;
  try {
    url = new URL(call.path, baseUrl);
  } catch {
    io.stderr.write(`error: MARKETPLACE_URL is not a URL: ${baseUrl}\n`);
    return EXIT.usage;
  }
  return send(url, call, adminToken, io);
};

const adminCallOf = (argv: readonly string[]): AdminCall => {
  const [command, ...rest] = argv;
  switch (command) {
    case 'create': {
      const { values, positionals } = parseArgs({
        args: [...rest],
        options: {
          role: { type: 'string' },
          name: { type: 'string' },
          email: { type: 'string' },
          company: { type: 'string' },
          country: { type: 'string' },
        },
        strict: true,
        allowPositionals: true,
      });
      if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals.join(' ')}`);
      const { role, name, email } = values;
      if (role === undefined || name === undefined || email === undefined) {
        throw new UsageError('create needs --role, --name and --email');
      }
      const optional = Object.fromEntries(
        Object.entries({ company: values.company, country: values.country }).filter(
          ([, v]) => v !== undefined,
        ),
      ) as Record<string, string>;
      return { method: 'POST', path: '/api/admin/accounts', body: { role, name, email, ...optional } };
    }
    case 'add-key': {
      const accountId = singlePositional(rest, 'add-key needs an ACCOUNT_ID');
      if (!/^[1-9][0-9]*$/.test(accountId)) throw new UsageError(`not an account id: ${accountId}`);
      return { method: 'POST', path: `/api/admin/accounts/${accountId}/api-keys` };
    }
    case 'revoke-key': {
      const prefix = singlePositional(rest, 'revoke-key needs a KEY_PREFIX (lmk_xxxxxxxx)');
      return { method: 'DELETE', path: `/api/admin/api-keys/${encodeURIComponent(prefix)}` };
    }
    case undefined:
      throw new UsageError('missing command');
    default:
      throw new UsageError(`unknown command ${command}`);
  }
};

const singlePositional = (args: readonly string[], missing: string): string => {
  const [only, ...extra] = args;
  if (only === undefined || only.startsWith('-')) throw new UsageError(missing);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra.join(' ')}`);
  return only;
};

const send = async (url: URL, call: AdminCall, adminToken: string, io: CliIo): Promise<number> => {
  const outcome = await callMarketplace(
    url,
    {
      method: call.method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(call.body ? { 'content-type': 'application/json' } : {}),
      },
      ...(call.body ? { body: JSON.stringify(call.body) } : {}),
    },
    io.fetch,
  );
  if (!outcome.reached) {
    io.stderr.write(`error: ${outcome.message}\n`);
    return EXIT.failed;
  }
  if (outcome.status < 200 || outcome.status > 299) {
    io.stderr.write(`error: ${describeRefusal(url, outcome.status, outcome.text)}\n`);
    return EXIT.failed;
  }
  if (outcome.status === 204) {
    io.stdout.write(`revoked ${decodeURIComponent(url.pathname.split('/').at(-1) ?? '')}\n`);
    return EXIT.ok;
  }
  io.stdout.write(`${outcome.text}\n`);
  io.stderr.write('the api_key above is shown once: store it now\n');
  return EXIT.ok;
};
