import { createInflateRaw } from 'node:zlib';
import { validationError } from '@marketplace/platform';

/**
 * The most an uploaded XLSX file may inflate to, all its parts together (docs/imports.md). A 50,000-row sheet of
 * the template inflates to a few tens of megabytes; exceljs holds every part in memory as one string, so a
 * kilobyte of deflate that inflates to gigabytes must be refused before it is handed over.
 */
export const MAX_INFLATED_BYTES = 256 * 1024 * 1024;

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

const refused = (message: string): Error =>
  validationError('unreadable import file', [
    { path: 'file', message: `is not a readable XLSX file: ${message}` },
  ]);

/** The end-of-central-directory record: within the last 22 bytes plus a comment of up to 65,535. */
const endOfCentralDirectory = (zip: Buffer): number => {
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (zip.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw refused('it is not a zip archive (no central directory)');
};

/** Inflates one deflated part without keeping it, counting its bytes; stops at `budget`. */
const inflatedLength = (data: Buffer, budget: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const inflate = createInflateRaw();
    let length = 0;
    inflate.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > budget) {
        inflate.destroy();
        resolve(length);
      }
    });
    inflate.on('end', () => resolve(length));
    inflate.on('error', () => reject(refused('a part of it is corrupt')));
    inflate.end(data);
  });

/**
 * Refuses an XLSX (zip) file whose parts inflate to more than MAX_INFLATED_BYTES, measured by inflating them
 * (the sizes a zip declares can lie) in small chunks that are dropped as they come.
 */
export const checkInflatedSize = async (zip: Buffer, limit = MAX_INFLATED_BYTES): Promise<void> => {
  if (zip.length < 22) throw refused('it is not a zip archive (too short)');
  const end = endOfCentralDirectory(zip);
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  let total = 0;
  for (let entry = 0; entry < entries; entry++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== CENTRAL_FILE_HEADER) {
      throw refused('its central directory is corrupt');
    }
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const local = zip.readUInt32LE(at + 42);
    at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    if (local + 30 > zip.length || zip.readUInt32LE(local) !== LOCAL_FILE_HEADER) {
      throw refused('a part of it is corrupt');
    }
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    // A ZIP64 size (0xFFFFFFFF) is not read: the deflate stream ends itself, the rest of the file bounds it.
    const data = zip.subarray(start, compressedSize === 0xffffffff ? zip.length : start + compressedSize);
    if (method === STORED) total += data.length;
    else if (method === DEFLATED) total += await inflatedLength(data, limit - total);
    else throw refused(`a part of it uses compression method ${method}`);
    if (total > limit) {
      throw validationError('import file too large', [
        {
          path: 'file',
          message: `inflates to more than ${limit / 1024 / 1024} MiB, more than a spreadsheet of the template's rows needs`,
        },
      ]);
    }
  }
};
