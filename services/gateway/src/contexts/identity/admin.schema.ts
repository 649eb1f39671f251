import { z } from 'zod';
import { ACCOUNT_ROLES } from '../../edge/account.js';
import { characterCount } from '../../edge/schemas/validate.js';
import { isCountryCode } from '@marketplace/vocabulary';

const MAX_NAME_CHARACTERS = 200;
/** RFC 5321 caps a forward path at 256 octets, so an address is at most 254 characters. */
const MAX_EMAIL_CHARACTERS = 254;

const text = (maxLength: number) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .refine((value) => characterCount(value) <= maxLength, `must be at most ${maxLength} characters`);

/** Body of POST /api/admin/accounts. Unknown fields are rejected, as everywhere a body creates something. */
export const createAccountBodySchema = z.strictObject({
  role: z.enum(ACCOUNT_ROLES),
  name: text(MAX_NAME_CHARACTERS),
  email: z.email('must be an email address').max(MAX_EMAIL_CHARACTERS),
  company: text(MAX_NAME_CHARACTERS).optional(),
  country: z
    .string()
    .transform((code) => code.toUpperCase())
    .refine(isCountryCode, 'must be an ISO 3166-1 alpha-2 country code')
    .optional(),
});

/** Path parameter of POST /api/admin/accounts/{id}/api-keys. */
export const accountIdSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/, 'must be an account id')
  .transform(Number)
  .pipe(z.int('must be an account id'));
