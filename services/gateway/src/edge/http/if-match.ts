import type { Request } from 'express';

/**
 * The listing versions an `If-Match` header accepts (RFC 9110 §13.1.1, strong comparison): undefined when
 * there is no header or it is `*` (any current listing). Our ETags are `"<version>"`; a weak or foreign tag
 * can never match, so a header of only such tags gives `[0]`, a version no listing has (they start at 1), and
 * the change fails with 412 like any stale one.
 */
export const ifMatchVersionsOf = (req: Request): number[] | undefined => {
  const header = req.get('if-match');
  if (header === undefined || header.trim() === '*') return undefined;
  const versions = header
    .split(',')
    .map((tag) => /^"([1-9][0-9]{0,14})"$/.exec(tag.trim())?.[1])
    .filter((version): version is string => version !== undefined)
    .map(Number);
  return versions.length > 0 ? versions : [0];
};
