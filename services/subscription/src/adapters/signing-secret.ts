import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Where a generated secret is kept under DATA_DIR. */
export const signingSecretPathOf = (dataDir: string): string =>
  join(dataDir, 'secrets', 'webhook-signing-secret');

/**
 * `WEBHOOK_SIGNING_SECRET` when configured; otherwise the secret generated on the first start (256 random bits)
 * and kept in DATA_DIR, so receivers keep verifying across restarts. Several replicas must share one secret:
 * set the variable (or share DATA_DIR) in cluster mode.
 */
export const loadOrCreateSigningSecret = async (
  configured: string | undefined,
  dataDir: string,
): Promise<string> => {
  if (configured !== undefined && configured !== '') return configured;
  const path = signingSecretPathOf(dataDir);
  try {
    const stored = (await readFile(path, 'utf8')).trim();
    if (stored !== '') return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dirname(path), { recursive: true });
  const generated = randomBytes(32).toString('hex');
  // `wx`: two processes starting together on one DATA_DIR must not each keep a different secret.
  try {
    await writeFile(path, `${generated}\n`, { flag: 'wx', mode: 0o600 });
    return generated;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return (await readFile(path, 'utf8')).trim();
  }
};
