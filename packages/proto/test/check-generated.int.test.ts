import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const script = join(packageDir, 'scripts', 'check-generated.sh');

interface CheckResult {
  readonly exitCode: number;
  readonly output: string;
}

const runCheck = (generatedDir: string): Promise<CheckResult> =>
  new Promise((resolve) => {
    execFile('sh', [script, generatedDir], { timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ exitCode: error === null ? 0 : Number(error.code ?? 1), output: stdout + stderr });
    });
  });

describe('check-generated.sh', () => {
  let copy: string;

  beforeEach(async () => {
    copy = await mkdtemp(join(tmpdir(), 'generated-'));
    await cp(join(packageDir, 'src', 'generated'), copy, { recursive: true });
  });
  afterEach(async () => {
    await rm(copy, { recursive: true, force: true });
  });

  it('passes when the code matches what proto/ generates', async () => {
    expect(await runCheck(copy)).toEqual({ exitCode: 0, output: expect.stringContaining('up to date') });
  });

  it('fails naming the file when generated code was edited', async () => {
    await appendFile(join(copy, 'marketplace', 'listing', 'v1', 'listing.ts'), '// edited by hand\n');
    const { exitCode, output } = await runCheck(copy);
    expect(exitCode).toBe(1);
    expect(output).toContain('is stale');
    expect(output).toContain('listing/v1/listing.ts');
    expect(output).toContain("Run 'pnpm proto:generate'");
  });

  it('fails when a generated file is missing', async () => {
    await rm(join(copy, 'marketplace', 'catalog', 'v1', 'catalog_service.ts'));
    const { exitCode, output } = await runCheck(copy);
    expect(exitCode).toBe(1);
    expect(output).toContain('Only in');
    expect(output).toContain('catalog_service.ts');
  });
});
