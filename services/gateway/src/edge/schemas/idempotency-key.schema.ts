import { z } from 'zod';
import {
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_PATTERN,
  idempotencyKeyProblem,
} from '@marketplace/eventsourcing';

/** The request header of the creating REST operations (ACP, UCP), echoed on their answers. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

const IDEMPOTENCY_KEY_MEANING =
  `1-${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters; a UUID makes a good key. Makes a create safe to ` +
  'repeat: the same key with the same request answers what the first request created, the same key with another ' +
  'request is a 422 idempotency_conflict. Keys are kept at least 24 hours (docs/idempotency.md).';

/**
 * A client's idempotency key, checked by the services' own rule (`idempotencyKeyProblem`) so the gateway and the
 * owning service refuse the same keys; the JSON Schema states the rule as maxLength and pattern.
 */
export const idempotencyKeySchema = z
  .string({ error: 'must be a string' })
  .check((context) => {
    const problem = idempotencyKeyProblem(context.value);
    if (problem !== undefined)
      context.issues.push({ code: 'custom', message: problem, input: context.value });
  })
  .meta({
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
    pattern: IDEMPOTENCY_KEY_PATTERN.source,
    description: IDEMPOTENCY_KEY_MEANING,
  });

/** The `idempotency_key` argument of the tools that create (create_listing, request_quote, quick_buy). */
export const idempotencyKeyArgument = idempotencyKeySchema.optional();
