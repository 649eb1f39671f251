import type { Readable } from 'node:stream';
import { validationError } from '@marketplace/platform';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';

/**
 * The most an uploaded XLSX file may inflate to, all its parts together (docs/imports.md). A 50,000-row sheet of
 * the template inflates to a few tens of megabytes; exceljs holds every part in memory as one string, so a
 * kilobyte of deflate that inflates to gigabytes must be refused before it is handed over.
 */
export const MAX_INFLATED_BYTES = 256 * 1024 * 1024;

const unreadable = (error: unknown): Error =>
  validationError('unreadable import file', [
    {
      path: 'file',
      message: `is not a readable XLSX file: ${error instanceof Error ? error.message : String(error)}`,
    },
  ]);

const tooLarge = (limit: number): Error =>
  validationError('import file too large', [
    {
      path: 'file',
      message: `inflates to more than ${limit / 1024 / 1024} MiB, more than a spreadsheet of the template's rows needs`,
    },
  ]);

/** yauzl checks each part's inflated length against the size its zip declares, and fails the part otherwise. */
const openArchive = (zip: Buffer): Promise<ZipFile> =>
  new Promise((resolve, reject) =>
    yauzl.fromBuffer(zip, { lazyEntries: true, validateEntrySizes: true }, (error, archive) =>
      error ? reject(unreadable(error)) : resolve(archive),
    ),
  );

/** Every part of the archive, one at a time. */
async function* entriesOf(archive: ZipFile): AsyncGenerator<Entry> {
  for (;;) {
    const next = new Promise<Entry | undefined>((resolve, reject) => {
      const settle = (entry: Entry | undefined, error?: Error): void => {
        archive.off('entry', onEntry).off('end', onEnd).off('error', onError);
        if (error) reject(unreadable(error));
        else resolve(entry);
      };
      const onEntry = (entry: Entry): void => settle(entry);
      const onEnd = (): void => settle(undefined);
      const onError = (error: Error): void => settle(undefined, error);
      archive.on('entry', onEntry).once('end', onEnd).once('error', onError);
    });
    archive.readEntry();
    const entry = await next;
    if (entry === undefined) return;
    yield entry;
  }
}

/** Inflates a part to its end without keeping it, so a part that inflates past its declared size fails. */
const drain = (archive: ZipFile, entry: Entry): Promise<void> =>
  new Promise((resolve, reject) =>
    archive.openReadStream(entry, (error, stream: Readable) => {
      if (error) return reject(unreadable(error));
      stream.on('error', (failure) => reject(unreadable(failure)));
      stream.on('end', resolve);
      stream.resume();
    }),
  );

/**
 * Refuses an XLSX (zip) file whose parts inflate to more than `limit`, before exceljs inflates them into memory:
 * by the sizes the zip declares, which every part is inflated (and dropped as it comes) to hold to, so a zip that
 * understates a part is refused as unreadable. The archive is read with yauzl (docs/imports.md, "Reading the file").
 */
export const checkInflatedSize = async (zip: Buffer, limit = MAX_INFLATED_BYTES): Promise<void> => {
  const archive = await openArchive(zip);
  try {
    let declared = 0;
    for await (const entry of entriesOf(archive)) {
      declared += entry.uncompressedSize;
      if (declared > limit) throw tooLarge(limit);
      await drain(archive, entry);
    }
  } finally {
    archive.close();
  }
};
