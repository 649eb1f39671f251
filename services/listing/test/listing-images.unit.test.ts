import { describe, expect, it } from '@jest/globals';
import {
  detectImageFormat,
  hostedImageKey,
  isImageContentType,
  titleWords,
} from '../src/domain/listing-images.js';

const bytes = (...parts: (number[] | string)[]): Uint8Array =>
  Buffer.concat(
    parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))),
  );

describe('image formats by magic number', () => {
  it.each([
    ['jpeg', bytes([0xff, 0xd8, 0xff, 0xe0], 'JFIF'), 'jpg', 'image/jpeg'],
    ['png', bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'IHDR'), 'png', 'image/png'],
    ['gif87a', bytes('GIF87a', [1, 0]), 'gif', 'image/gif'],
    ['gif89a', bytes('GIF89a', [1, 0]), 'gif', 'image/gif'],
    ['webp', bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 '), 'webp', 'image/webp'],
  ])('recognises %s', (_name, data, extension, contentType) => {
    expect(detectImageFormat(data)).toEqual({ extension, contentType });
  });

  it.each([
    ['html', bytes('<html><body>')],
    ['svg (scriptable, never re-hosted)', bytes('<svg xmlns="http://www.w3.org/2000/svg">')],
    ['a RIFF that is not webp (wav)', bytes('RIFF', [0x24, 0, 0, 0], 'WAVEfmt ')],
    ['a truncated png signature', bytes([0x89, 0x50, 0x4e, 0x47])],
    ['nothing', bytes()],
  ])('refuses %s', (_name, data) => {
    expect(detectImageFormat(data)).toBeUndefined();
  });

  it('accepts only image content types from the sender', () => {
    expect(isImageContentType('image/png')).toBe(true);
    expect(isImageContentType('text/html')).toBe(false);
    expect(isImageContentType(undefined)).toBe(false);
  });

  it('names a hosted image by its hash and the extension its bytes showed', () => {
    expect(hostedImageKey('ab'.repeat(32), { extension: 'webp', contentType: 'image/webp' })).toBe(
      `${'ab'.repeat(32)}.webp`,
    );
  });
});

describe('title words', () => {
  it('lower-cases, splits on anything but letters and digits of any script, drops one-letter words, dedupes', () => {
    expect(titleWords('Pallet of USB-C chargers, 65 W — USB chargers')).toEqual([
      'pallet',
      'of',
      'usb',
      'chargers',
      '65',
    ]);
    expect(titleWords('Kühlschränke für Büros')).toEqual(['kühlschränke', 'für', 'büros']);
    expect(titleWords(' - ')).toEqual([]);
  });
});
