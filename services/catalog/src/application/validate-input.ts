import type { z } from 'zod';
import { validationError } from '@marketplace/platform';

/**
 * The input parsed by `schema`, or AppError('validation') naming every offending field at once (the gateway
 * validates too; the service checks again because it trusts no caller).
 */
export const parseInput = <S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> => {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const violations = result.error.issues.map(({ path, message }) => ({
    path: path.map(String).join('/'),
    message,
  }));
  throw validationError(
    `invalid ${what}: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
    violations,
  );
};
