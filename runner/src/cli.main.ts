#!/usr/bin/env node
import { runAccountsCli, runDemoCli, runImportCli } from '@marketplace/gateway';

const USAGE = `usage: marketplace accounts <create|add-key|revoke-key> ... | marketplace demo [--keys-file PATH]
  marketplace accounts create --role seller|buyer --name NAME --email EMAIL [--company C] [--country CC]
  marketplace accounts add-key ACCOUNT_ID
  marketplace accounts revoke-key KEY_PREFIX
  marketplace demo [--keys-file PATH]   seeds a demo seller, 50 lots, a buyer and a saved search
  marketplace listings import FILE [--mode upsert_by_sku|create]   imports a CSV or XLSX file (docs/imports.md)
Talks to the admin API at MARKETPLACE_URL (default http://localhost:8080) with ADMIN_TOKEN; listings import
uses SELLER_KEY.
`;

const [command, ...rest] = process.argv.slice(2);
if (command === 'accounts') {
  process.exitCode = await runAccountsCli(rest, {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
  });
} else if (command === 'demo') {
  process.exitCode = await runDemoCli(rest, {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
  });
} else if (command === 'listings' && rest[0] === 'import') {
  process.exitCode = await runImportCli(rest.slice(1), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
  });
} else {
  process.stderr.write(USAGE);
  process.exitCode = command === undefined || command === '--help' ? 0 : 2;
}
