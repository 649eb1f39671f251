import { notFound, parseProductId } from '@marketplace/platform';
import { z } from 'zod';
import { parseOrThrow } from '../schemas/validate.js';

export const orderIdParamsSchema = z.object({
  id: z.string().regex(/^[1-9][0-9]*$/, 'must be an order id (a positive whole number)'),
});

export const quoteRequestIdParamsSchema = z.object({
  id: z.string().regex(/^[1-9][0-9]*$/, 'must be a quote request id (a positive whole number)'),
});

/**
 * Ids in paths (docs/specification.md, "Ids in paths"): an id of its kind's form that names nothing is 404 like
 * any unknown id, also beyond 2^53 − 1, the largest id a sequence hands out; only a segment that is not of that
 * form is 400 naming `id`.
 */
const sequenceIdOf = (id: string, what: string): number => {
  const value = Number(id);
  if (!Number.isSafeInteger(value)) throw notFound(`no ${what} ${id}`);
  return value;
};

export const orderIdOfPath = (params: unknown): number =>
  sequenceIdOf(parseOrThrow(orderIdParamsSchema, params, 'order id').id, 'order');

export const quoteRequestIdOfPath = (params: unknown): number =>
  sequenceIdOf(parseOrThrow(quoteRequestIdParamsSchema, params, 'quote request id').id, 'quote request');

/** A product path answers 404 to anything that is not a product id of ours, as the catalog's does (docs/specification.md, "Catalog endpoints"). */
export const productIdOfPath = (productId: string | undefined): string => {
  if (productId === undefined || parseProductId(productId) === undefined) {
    throw notFound(`no product ${productId ?? ''}`);
  }
  return productId;
};
