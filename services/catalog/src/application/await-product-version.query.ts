import { z } from 'zod';
import { parseProductId } from '@marketplace/platform';
import { parseInput } from './validate-input.js';

/** The longest a caller may hold an AwaitProductVersion call open (the gRPC drain bound is 10 s). */
export const MAX_AWAIT_PRODUCT_VERSION_MS = 10_000;

const awaitProductVersionInput = z.object({
  productId: z.string().refine((id) => parseProductId(id) !== undefined, 'must look like product_<number>'),
  minVersion: z.number().int().min(1),
  sellerAccountId: z.number().int().min(1),
  timeoutMs: z.number().int().min(1).max(MAX_AWAIT_PRODUCT_VERSION_MS),
});

export type AwaitProductVersionInput = z.input<typeof awaitProductVersionInput>;

/** Waits until the seller's product is at a version, or the time passes (`ProductVersionWaits`). */
export type VersionWait = (
  request: { readonly productId: string; readonly sellerAccountId: number; readonly minVersion: number },
  timeoutMs: number,
  signal: AbortSignal,
) => Promise<boolean>;

/** AwaitProductVersion: validated, then the wait; true once applied (never for another seller's product). */
export const awaitProductVersion = (
  wait: VersionWait,
  input: AwaitProductVersionInput,
  signal: AbortSignal,
): Promise<boolean> => {
  const { timeoutMs, ...request } = parseInput(
    awaitProductVersionInput,
    input,
    'AwaitProductVersion request',
  );
  return wait(request, timeoutMs, signal);
};
