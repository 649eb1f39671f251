import { SEARCH_TEXT_LIMITS, wordCount } from './search-index.port.js';
import type { SearchQuery } from './search-index.port.js';

/** Every adapter's last line of defence against bad input (services validate first): a RangeError. */
export const assertVersion = (version: number): void => {
  if (!Number.isSafeInteger(version) || version < 1)
    throw new RangeError(`invalid document version: ${version}`);
};

export const assertWithinLimits = ({ text = '', limit, offset }: SearchQuery): void => {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`invalid search limit: ${limit}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`invalid search offset: ${offset}`);
  if ([...text].length > SEARCH_TEXT_LIMITS.maxCharacters || wordCount(text) > SEARCH_TEXT_LIMITS.maxWords) {
    throw new RangeError(
      `search text exceeds ${SEARCH_TEXT_LIMITS.maxCharacters} characters or ${SEARCH_TEXT_LIMITS.maxWords} words`,
    );
  }
};
