import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const CHART_DIR = join(import.meta.dirname, '../../marketplace');
const RENDERER_SOURCE = join(import.meta.dirname, '../renderer/render.go');

/** A rendered Kubernetes object, as `helm template` would print it. */
export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly [field: string]: unknown;
}

/**
 * Builds the Go renderer once per source version (Debian's Go and sprig, GOPATH mode: no module download) and
 * returns its path. The binary is cached in the temporary directory keyed by the source's hash.
 */
export const rendererBinary = (): string => {
  const source = readFileSync(RENDERER_SOURCE);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), 'marketplace-chart-render');
  const binary = join(dir, `chart-render-${hash}`);
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('go', ['build', '-o', binary, RENDERER_SOURCE], {
      env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  }
  return binary;
};

export interface RenderOptions {
  /** Values files, applied in order after the chart's values.yaml. */
  readonly valuesFiles?: readonly string[];
  /** `path=value` overrides, as `helm template --set`. */
  readonly set?: readonly string[];
}

const renderArgs = ({ valuesFiles = [], set = [] }: RenderOptions): string[] => [
  CHART_DIR,
  ...valuesFiles.flatMap((file) => ['-f', file]),
  ...set.flatMap((assignment) => ['--set', assignment]),
];

/** Renders the chart's manifests into objects; throws with the renderer's message when a template fails. */
export const renderChart = (options: RenderOptions = {}): K8sObject[] => {
  const text = execFileSync(rendererBinary(), renderArgs(options), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return parseAllDocuments(text).flatMap((document) => {
    if (document.errors.length > 0) throw new Error(`invalid YAML rendered: ${document.errors[0]!.message}`);
    const object = document.toJS() as K8sObject | null;
    return object === null ? [] : [object];
  });
};

/** Renders NOTES.txt. */
export const renderNotes = (options: RenderOptions = {}): string =>
  execFileSync(rendererBinary(), [...renderArgs(options), '--notes'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** The ci/*.yaml value sets, as chart-testing would use them. */
export const ciValuesFiles = (): string[] =>
  readdirSync(join(CHART_DIR, 'ci'))
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => join(CHART_DIR, 'ci', name));
