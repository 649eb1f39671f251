import { z } from 'zod';
import { parseAllowList } from './address-policy.js';

/** `OUTBOUND_ALLOW_HOSTS`: comma-separated hosts or CIDRs that outbound fetches may reach although not public. */
export const outboundConfigSchema = z.object({
  OUTBOUND_ALLOW_HOSTS: z
    .string()
    .default('')
    .transform((value, context) => {
      try {
        return parseAllowList(value);
      } catch (error) {
        context.addIssue({ code: 'custom', message: `not a host or CIDR list: ${(error as Error).message}` });
        return z.NEVER;
      }
    }),
});

export type OutboundConfig = z.infer<typeof outboundConfigSchema>;
