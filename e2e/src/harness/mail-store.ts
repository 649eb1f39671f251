import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The `.eml` files the marketplace's mailer kept under `dataDir/mail`. Only finished messages: the mailer writes
 * each to a `.tmp` file and renames it, so a name that does not end in `.eml` may still be half written.
 */
export const mailFileNames = async (dataDir: string): Promise<string[]> =>
  (await readdir(join(dataDir, 'mail')).catch(() => [] as string[])).filter((name) => name.endsWith('.eml'));

/**
 * The text of the first kept message whose file name (its Message-ID) contains `key`, with quoted-printable soft
 * line breaks joined (enough for the phrases tests look for), or undefined while there is none.
 */
export const mailText = async (dataDir: string, key: string): Promise<string | undefined> => {
  const name = (await mailFileNames(dataDir)).find((candidate) => candidate.includes(key));
  return name && (await readFile(join(dataDir, 'mail', name), 'utf8')).replace(/=\r?\n/g, '');
};
