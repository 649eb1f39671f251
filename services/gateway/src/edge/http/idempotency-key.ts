import type { Request, Response } from 'express';
import { z } from 'zod';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeySchema } from '../schemas/idempotency-key.schema.js';
import { parseOrThrow } from '../schemas/validate.js';

const headerSchema = z.object({ [IDEMPOTENCY_KEY_HEADER]: idempotencyKeySchema });

/** Checks an Idempotency-Key header: a malformed key is a 400 whose violation names the header. */
export const checkIdempotencyKeyHeader = (key: string): string =>
  parseOrThrow(headerSchema, { [IDEMPOTENCY_KEY_HEADER]: key }, `${IDEMPOTENCY_KEY_HEADER} header`)[
    IDEMPOTENCY_KEY_HEADER
  ];

/**
 * The request's Idempotency-Key, checked and echoed on the answer (ACP), or undefined when none was sent. The
 * owning service records it with what it creates.
 */
export const idempotencyKeyOf = (req: Request, res: Response): string | undefined => {
  const key = req.get(IDEMPOTENCY_KEY_HEADER);
  if (key === undefined) return undefined;
  res.set(IDEMPOTENCY_KEY_HEADER, checkIdempotencyKeyHeader(key));
  return key;
};
