import { z } from 'zod';

// Query parameters as every list route reads them (catalog search, order and quote lists, a seller's listings):
// one value each, an empty value as none, whole numbers in range.

/** Express hands a parameter given twice as an array: reject it with a message that says why. */
export const once = z.string({
  error: (issue) => (Array.isArray(issue.input) ? 'must be given once' : 'must be a string'),
});

export const optionalParameter = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

export const wholeNumber = (min: number, max: number) =>
  once
    .regex(/^[0-9]{1,10}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
