import { z } from 'zod';
import type { FieldViolation } from '@marketplace/platform';
import { validationError } from '@marketplace/platform';
import { LISTING_LIMITS, QUOTE_ACTIONS, QUOTE_LIMITS } from '@marketplace/vocabulary';
import type { QuoteRequestDraft, QuoteResponseDraft } from './quote.commands.js';

/**
 * The quote rules of docs/specification.md, "Quotes" and 4.3 that need no I/O. Every rule runs, so a caller learns every problem at
 * once. Violation paths are the REST field names of `POST /api/ucp/quotes` (`buyer/email`, `target_price`) and
 * of respond_to_quote (`counter_price`); the gateway renames them for surfaces that spell fields differently.
 */

const characterCount = (text: string): number => [...text].length;

/** Blank optional texts count as not sent; texts are stored trimmed. */
const optionalText = (maxLength: number) =>
  z
    .string()
    .trim()
    .refine((value) => characterCount(value) <= maxLength, `must be at most ${maxLength} characters`)
    .optional()
    .transform((value) => (value === '' ? undefined : value));

const cents = z
  .int({ error: 'must be a whole number of cents' })
  .positive('must be greater than 0')
  .max(LISTING_LIMITS.maxPriceCents, `must be at most ${LISTING_LIMITS.maxPriceCents} cents`);

const quoteRequestSchema = z.object({
  quantity: z
    .int({ error: 'must be a whole number' })
    .min(1, 'must be at least 1')
    .max(QUOTE_LIMITS.maxQuantity, `must be at most ${QUOTE_LIMITS.maxQuantity}`),
  buyer: z.object({
    email: z
      .email({ error: 'must be an email address' })
      .max(QUOTE_LIMITS.emailMaxLength, `must be at most ${QUOTE_LIMITS.emailMaxLength} characters`),
    name: optionalText(QUOTE_LIMITS.buyerNameMaxLength),
    company: optionalText(QUOTE_LIMITS.buyerCompanyMaxLength),
  }),
  targetPriceCents: cents.optional(),
  message: optionalText(QUOTE_LIMITS.messageMaxLength),
  shippingDestination: optionalText(QUOTE_LIMITS.shippingDestinationMaxLength),
});

const quoteResponseSchema = z
  .object({
    action: z.enum(QUOTE_ACTIONS, { error: `must be one of ${QUOTE_ACTIONS.join(', ')}` }),
    counterPriceCents: cents.optional(),
    message: optionalText(QUOTE_LIMITS.messageMaxLength),
  })
  .superRefine((response, context) => {
    if (response.action === 'counter' && response.counterPriceCents === undefined) {
      context.addIssue({ code: 'custom', path: ['counterPriceCents'], message: 'is required to counter' });
    }
    if (response.action !== 'counter' && response.counterPriceCents !== undefined) {
      context.addIssue({ code: 'custom', path: ['counterPriceCents'], message: 'is only for counter' });
    }
  });

export type ValidQuoteRequest = z.output<typeof quoteRequestSchema>;
export type ValidQuoteResponse = z.output<typeof quoteResponseSchema>;

const REST_FIELD_NAMES: ReadonlyMap<string, string> = new Map([
  ['targetPriceCents', 'target_price'],
  ['counterPriceCents', 'counter_price'],
  ['shippingDestination', 'shipping_destination'],
]);

const violationOf = ({ path, message }: z.core.$ZodIssue): FieldViolation => {
  const [field = '', ...rest] = path.map(String);
  return { path: [REST_FIELD_NAMES.get(field) ?? field, ...rest].join('/'), message };
};

const parseOrThrow = <S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const violations = result.error.issues.map(violationOf);
  throw validationError(
    `invalid ${what}: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
    violations,
  );
};

/** Throws AppError('validation') listing every violation. */
export const validateQuoteRequest = (draft: QuoteRequestDraft): ValidQuoteRequest =>
  parseOrThrow(quoteRequestSchema, draft, 'quote request');

/** Throws AppError('validation') listing every violation. */
export const validateQuoteResponse = (draft: QuoteResponseDraft): ValidQuoteResponse =>
  parseOrThrow(quoteResponseSchema, draft, 'quote response');
