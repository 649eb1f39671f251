import type { z } from 'zod';
import type { FieldViolation } from '@marketplace/platform';
import { validationError } from '@marketplace/platform';

/** Path of a violation about the whole body or query rather than one field. */
export const WHOLE_INPUT = '(root)';

/** One violation per offending field: an unknown-keys issue names each key, other paths join with `/`. */
export const violationsOf = (error: z.ZodError): FieldViolation[] =>
  error.issues.flatMap((issue) => {
    const base = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: [...base, key].join('/'), message: 'is not a known field' }));
    }
    return [{ path: base.length > 0 ? base.join('/') : WHOLE_INPUT, message: issue.message }];
  });

/** Parses `input` or throws a validation AppError naming every offending field. */
export const parseOrThrow = <S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> => {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const violations = violationsOf(result.error);
  throw validationError(
    `invalid ${what}: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
    violations,
  );
};

/** Characters as the specification counts them: code points, so an emoji is one character. */
export const characterCount = (text: string): number => [...text].length;
