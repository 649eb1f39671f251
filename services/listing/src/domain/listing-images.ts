/**
 * What the marketplace accepts as a listing image and how a hosted image is named. Pure: the bytes decide the
 * format, never the URL or the sender's Content-Type alone.
 */
export interface ImageFormat {
  readonly extension: 'jpg' | 'png' | 'gif' | 'webp';
  readonly contentType: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
}

const startsWith = (bytes: Uint8Array, signature: readonly number[], offset = 0): boolean =>
  bytes.length >= offset + signature.length &&
  signature.every((byte, index) => bytes[offset + index] === byte);

const ascii = (text: string): number[] => [...text].map((character) => character.charCodeAt(0));

/** The format the bytes' magic number announces; undefined for anything that is not a jpeg, png, gif or webp. */
export const detectImageFormat = (bytes: Uint8Array): ImageFormat | undefined => {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { extension: 'jpg', contentType: 'image/jpeg' };
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    return { extension: 'png', contentType: 'image/png' };
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a')))
    return { extension: 'gif', contentType: 'image/gif' };
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8))
    return { extension: 'webp', contentType: 'image/webp' };
  return undefined;
};

/** A sender's Content-Type must at least claim an image; the bytes then decide which. */
export const isImageContentType = (contentType: string | undefined): boolean =>
  contentType?.startsWith('image/') ?? false;

/** Where a hosted image lives: `/images/<sha256>.<ext>`; the gateway makes it absolute. */
export const HOSTED_IMAGE_PREFIX = '/images/';

/** The blob key of a hosted image: content addressed, so the same picture is stored once. */
export const hostedImageKey = (sha256Hex: string, format: ImageFormat): string =>
  `${sha256Hex}.${format.extension}`;

export const hostedImagePath = (key: string): string => `${HOSTED_IMAGE_PREFIX}${key}`;

/** Words shorter than this ("a", "of") say nothing about what is pictured. */
const MIN_TITLE_WORD_LENGTH = 2;

/**
 * The words of a title the image library compares: lower case, letters and digits of any script, distinct.
 * Two listings' titles are as similar as the number of words they share.
 */
export const titleWords = (title: string): string[] => [
  ...new Set(
    title
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((word) => word.length >= MIN_TITLE_WORD_LENGTH),
  ),
];
