import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const SECRET_BYTES = 32;

/**
 * A secret generated once and kept in `<dataDir>/secrets/<name>` (mode 0600), for the embedded mode where the
 * operator configured none (docs/specification.md, "Running it"): tokens signed before a restart stay valid after it.
 * Created with O_EXCL, so two processes starting together on one DATA_DIR end up with the same secret.
 */
export const persistentSecret = async (dataDir: string, name: string): Promise<string> => {
  const directory = join(dataDir, 'secrets');
  const path = join(directory, name);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  try {
    await writeFile(path, randomBytes(SECRET_BYTES).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const secret = (await readFile(path, 'utf8')).trim();
  if (secret.length < SECRET_BYTES)
    throw new Error(`${path} holds no usable secret; delete it to generate one`);
  return secret;
};
