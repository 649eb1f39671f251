import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { declaredNames, parseDockerfile, SECRET_LOOKING_NAME, type Instruction } from '../src/dockerfile.js';

// The image cannot be built on these machines (no Docker daemon); these checks read the Dockerfile instead.
const ROOT = join(import.meta.dirname, '../../..');
const dockerfileText = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const dockerfile = parseDockerfile(dockerfileText);
const allInstructions = [...dockerfile.globalArgs, ...dockerfile.stages.flat()];
const finalStage = dockerfile.stages.at(-1) ?? [];

/** A base reference with an exact version (x.y.z) or a digest: never `latest`, `22` or `lts`. */
const PINNED_NODE_IMAGE = /^node:22\.\d+\.\d+-bookworm-slim(@sha256:[0-9a-f]{64})?$/;

const argDefault = (name: string): string | undefined => {
  const arg = dockerfile.globalArgs.find(
    ({ keyword, args }) => keyword === 'ARG' && args.startsWith(`${name}=`),
  );
  return arg?.args.slice(name.length + 1);
};

const baseOf = (from: Instruction): string => {
  const image = from.args.split(/\s+/)[0]!;
  const variable = /^\$\{?([A-Z_]+)\}?$/.exec(image)?.[1];
  return variable === undefined ? image : (argDefault(variable) ?? `unset ${variable}`);
};

describe('Dockerfile', () => {
  it('is multi-stage: a build stage and a runtime stage that only copies the pruned output', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    const copies = finalStage.filter(({ keyword }) => keyword === 'COPY' || keyword === 'ADD');
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) expect(copy.args).toMatch(/^--from=build /);
  });

  it('pins every base image to an exact Node 22 bookworm-slim version or digest', () => {
    const froms = dockerfile.stages.map((stage) => stage[0]!);
    for (const from of froms) expect(baseOf(from)).toMatch(PINNED_NODE_IMAGE);
  });

  it('installs pruned production dependencies with pnpm deploy for the chosen service', () => {
    const runs = dockerfile.stages[0]!.filter(({ keyword }) => keyword === 'RUN').map(({ args }) => args);
    expect(runs.join('\n')).toMatch(/pnpm --filter "@marketplace\/\$\{SERVICE\}" deploy --prod/);
    expect(runs.join('\n')).toMatch(/--frozen-lockfile/);
  });

  it('runs as a numeric non-root user in the final stage', () => {
    const users = finalStage.filter(({ keyword }) => keyword === 'USER');
    const user = users.at(-1)?.args ?? 'root';
    const uid = user.split(':')[0]!;
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).toBeGreaterThan(0);
    // Nothing after the USER switches back to root.
    const userIndex = finalStage.lastIndexOf(users.at(-1)!);
    expect(finalStage.slice(userIndex).filter(({ keyword }) => keyword === 'RUN')).toEqual([]);
  });

  it('declares no ENV or ARG whose name looks like a secret', () => {
    const declared = allInstructions
      .filter(({ keyword }) => keyword === 'ENV' || keyword === 'ARG')
      .flatMap(declaredNames);
    expect(declared.length).toBeGreaterThan(0);
    expect(declared.filter((name) => SECRET_LOOKING_NAME.test(name))).toEqual([]);
  });

  it('has no HEALTHCHECK (Kubernetes probes check health) and starts node itself in exec form', () => {
    expect(allInstructions.filter(({ keyword }) => keyword === 'HEALTHCHECK')).toEqual([]);
    const cmd = finalStage.filter(({ keyword }) => keyword === 'CMD').at(-1);
    expect(JSON.parse(cmd?.args ?? 'null')).toEqual(['node', 'dist/src/main.js']);
  });

  it('keeps secrets, local data and build output out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim());
    for (const pattern of [
      '.env',
      '.env.*',
      'data',
      '**/node_modules',
      '**/dist',
      '.git',
      '**/*.pem',
      '**/*.key',
    ])
      expect(ignored).toContain(pattern);
  });
});

describe('parseDockerfile', () => {
  it('joins continuation lines, skips comments and groups instructions by stage', () => {
    const parsed = parseDockerfile(
      [
        'ARG BASE=node:22.1.0-bookworm-slim',
        'FROM ${BASE} AS a',
        '# note',
        'RUN a \\',
        '  && b',
        'FROM ${BASE}',
        'ENV A=1 B=2',
      ].join('\n'),
    );
    expect(parsed.globalArgs.map(({ keyword }) => keyword)).toEqual(['ARG']);
    expect(parsed.stages.map((stage) => stage.map(({ keyword }) => keyword))).toEqual([
      ['FROM', 'RUN'],
      ['FROM', 'ENV'],
    ]);
    expect(parsed.stages[0]![1]!.args).toBe('a && b');
    expect(declaredNames(parsed.stages[1]![1]!)).toEqual(['A', 'B']);
  });

  it('flags secret-looking names', () => {
    for (const name of [
      'WEBHOOK_SIGNING_SECRET',
      'ADMIN_TOKEN',
      'S3_SECRET_ACCESS_KEY',
      'DB_PASSWORD',
      'NPM_API_KEY',
    ])
      expect(name).toMatch(SECRET_LOOKING_NAME);
    for (const name of ['NODE_ENV', 'DATA_DIR', 'SERVICE']) expect(name).not.toMatch(SECRET_LOOKING_NAME);
  });
});
