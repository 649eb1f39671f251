import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, freePort, repoRoot, SHARED_EMBEDDINGS_CACHE_DIR } from '../src/harness/processes.js';

/** The README's first-session block is the fenced block after this marker. */
const MARKER = '<!-- first-session:';
/** A clone builds everything (`pnpm start` runs `tsc -b`) on a machine busy with other suites. */
const READY_TIMEOUT_MS = Number(process.env['E2E_READY_TIMEOUT_MS'] ?? 300_000);

/** The commands of the marked block: comments and blank lines dropped, `\` continuations joined. */
const firstSessionCommands = (readme: string): string[] => {
  const from = readme.indexOf(MARKER);
  if (from < 0) throw new Error(`README.md has no ${MARKER} marker`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(from));
  if (!block) throw new Error('no ```sh block after the first-session marker');
  return block[1]!
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
};

/**
 * The clone gets the working repository's installed packages without a network: each package's node_modules
 * (pnpm's links, relative, so they resolve inside the clone) is copied and the root's .pnpm store is linked.
 */
const linkInstalledPackages = async (clone: string): Promise<void> => {
  const dirs = ['.', ...(await workspaceDirs())];
  for (const dir of dirs) {
    const source = join(repoRoot, dir, 'node_modules');
    if (!(await lstat(source).catch(() => undefined))) continue;
    const target = join(clone, dir, 'node_modules');
    await mkdir(target, { recursive: true });
    for (const entry of await readdir(source)) {
      if (dir === '.' && entry === '.pnpm') await linkStore(join(source, entry), join(target, entry));
      else await cp(join(source, entry), join(target, entry), { recursive: true, verbatimSymlinks: true });
    }
  }
};

/**
 * When the working copy is its last commit, its build (every package's `dist`, which `pnpm test` has just built
 * with `tsc -b`, as the other e2e files rely on) is copied into the clone after the checkout, so the clone's
 * `tsc -b` finds it up to date instead of building for half a minute. With local changes the clone builds.
 */
const carryOverBuild = async (clone: string): Promise<void> => {
  const changes = await bash(repoRoot, {}, 'git status --porcelain --untracked-files=no');
  if (changes.code !== 0 || changes.stdout.trim() !== '') return;
  for (const dir of await workspaceDirs()) {
    const source = join(repoRoot, dir, 'dist');
    if (await lstat(source).catch(() => undefined))
      await cp(source, join(clone, dir, 'dist'), { recursive: true });
  }
};

/**
 * The clone's `.pnpm` is a folder of its own whose package folders link to the working copy's: pnpm in the clone
 * may relink its hoisted `.pnpm/node_modules` (links relative to the clone), and with the whole `.pnpm` linked
 * that rewrote the working copy's links to point into the clone, deleted after the test.
 */
const linkStore = async (source: string, target: string): Promise<void> => {
  await mkdir(target);
  for (const entry of await readdir(source, { withFileTypes: true })) {
    const [from, to] = [join(source, entry.name), join(target, entry.name)];
    if (entry.isDirectory() && entry.name !== 'node_modules') await symlink(from, to);
    else await cp(from, to, { recursive: true, verbatimSymlinks: true });
  }
};

/** The workspace's package folders, as pnpm-workspace.yaml lists them (`dir` or `parent/*`). */
const workspaceDirs = async (): Promise<string[]> => {
  const manifest = await readFile(join(repoRoot, 'pnpm-workspace.yaml'), 'utf8');
  const block = manifest.split(/^packages:\n/m)[1] ?? '';
  const globs = [...block.matchAll(/^ {2}- (\S+)$/gm)].map((match) => match[1]!);
  const dirs: string[] = [];
  for (const glob of globs) {
    if (!glob.endsWith('/*')) {
      dirs.push(glob);
      continue;
    }
    const parent = glob.slice(0, -2);
    for (const entry of await readdir(join(repoRoot, parent), { withFileTypes: true }).catch(() => [])) {
      if (
        entry.isDirectory() &&
        (await lstat(join(repoRoot, parent, entry.name, 'package.json')).catch(() => undefined))
      ) {
        dirs.push(join(parent, entry.name));
      }
    }
  }
  return dirs;
};

/** Runs `script` with bash in the clone; resolves to its status and output. */
const bash = async (
  cwd: string,
  env: Record<string, string>,
  script: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> => {
  const child = spawn('bash', ['-c', script], { cwd, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
};

/**
 * README.md, "A first session", on a fresh clone of this repository (its last commit): the marked block's
 * commands run as written, the first (`pnpm start`) in the background, the others in one shell, each succeeding.
 */
describe('the README’s first session on a fresh clone', () => {
  let clone: string;
  let commands: string[];
  let server: ChildProcess | undefined;
  let serverOutput = '';
  let env: Record<string, string>;

  const stopServer = async (): Promise<void> => {
    if (server?.pid === undefined || server.exitCode !== null || server.signalCode !== null) return;
    const exited = once(server, 'exit');
    process.kill(-server.pid, 'SIGTERM'); // the group: pnpm, its shell and node
    const timer = setTimeout(() => server?.pid !== undefined && process.kill(-server.pid, 'SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };

  beforeAll(async () => {
    clone = await mkdtemp(join(tmpdir(), 'marketplace-first-session-'));
    const cloned = await bash(tmpdir(), {}, `git clone -q ${repoRoot} ${clone}`);
    expect(cloned).toMatchObject({ code: 0 });
    await linkInstalledPackages(clone);
    await carryOverBuild(clone);
    commands = firstSessionCommands(await readFile(join(clone, 'README.md'), 'utf8'));
    const port = String(await freePort());
    env = {
      PORT: port,
      HOST: '127.0.0.1',
      // What the README says to do when PORT changes.
      MARKETPLACE_URL: `http://127.0.0.1:${port}`,
      // The packages are linked, not installed: pnpm must not re-install into the shared store.
      npm_config_verify_deps_before_run: 'false',
      EMBEDDINGS_CACHE_DIR: SHARED_EMBEDDINGS_CACHE_DIR,
    };
  }, 120_000);

  afterAll(async () => {
    await stopServer();
    if (clone) await rm(clone, { recursive: true, force: true });
  });

  it('starts, seeds the demo, publishes, searches and asks for a quote as written', async () => {
    const [start, ...session] = commands;
    expect(start).toMatch(/^ADMIN_TOKEN=\S+ pnpm start$/);
    expect(session.length).toBeGreaterThanOrEqual(5);

    server = spawn('bash', ['-c', start!], { cwd: clone, env: { ...process.env, ...env }, detached: true });
    const keep = (chunk: Buffer) => (serverOutput = (serverOutput + chunk.toString()).slice(-20_000));
    server.stdout?.on('data', keep);
    server.stderr?.on('data', keep);
    await eventually(
      async () => {
        const response = await fetch(`${env['MARKETPLACE_URL']}/readyz`, {
          signal: AbortSignal.timeout(5_000),
        });
        return response.status === 200 ? true : undefined;
      },
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: 500, describe: () => `not ready:\n${serverOutput}` },
    );

    const script = [
      'set -eo pipefail',
      ...session.flatMap((command, n) => [command, `echo; echo "::done ${n}"`]),
    ].join('\n');
    const run = await bash(clone, env, script);
    const report = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect({ code: run.code, report }).toEqual({ code: 0, report });
    session.forEach((_, n) => expect(run.stdout).toContain(`::done ${n}`));
    // The demo's keys and lots, the seller's new lot, the search, the read and the quote request.
    expect(run.stdout).toContain('SELLER_KEY=lmk_');
    expect(run.stdout).toContain('"title":"Pallet of phone cases"');
    expect(run.stdout).toMatch(/"products":\[\{"id":"product_\d+","title":"Pallet of wireless earbuds"/);
    expect(run.stdout).toMatch(/"quote_request_id":\d+,"status":"pending"/);

    // A second demo run creates new accounts and lots; the first ones keep working.
    const demo = session.find((command) => command.includes('pnpm marketplace demo'));
    const again = await bash(clone, env, demo!);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(again.stderr).toContain('50 listings published');
  }, 600_000);

  it('says the marketplace is not reachable once it stopped', async () => {
    await stopServer();
    const demo = commands.find((command) => command.includes('pnpm marketplace demo'));
    const refused = await bash(clone, env, demo!);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `error: the marketplace is not reachable at ${env['MARKETPLACE_URL']} (ECONNREFUSED)`,
    );
  }, 120_000);
});
