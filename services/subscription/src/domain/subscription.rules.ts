import type { FieldViolation } from '@marketplace/platform';
import { mailboxOf, validationError } from '@marketplace/platform';
import { CATEGORIES, CONDITIONS, isCategory, isCondition, LISTING_LIMITS } from '@marketplace/vocabulary';
import type { Channel, SavedSearchQuery, SubscriptionDraft } from './subscription.js';

/** Limits of subscribe_to_query (docs/specification.md, "Limits" and docs/specification.md, "Saved searches"). */
export const SUBSCRIPTION_LIMITS = {
  minChannels: 1,
  maxChannels: 5,
  searchMaxLength: 1_000,
  urlMaxLength: 2_000,
  emailMaxLength: 254,
  /** The stored query object, serialised; unknown keys are kept, so they are bounded too. */
  queryMaxBytes: 8 * 1024,
} as const;

const SIMPLE_EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const COUNTRY = /^[A-Za-z]{2}$/;

type Violations = FieldViolation[];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A read value, or the message saying why it was refused. */
type Read<T> = { readonly value: T } | string;

/** Reads one optional key: `null` counts as absent, like the REST bodies. */
const optional = <T>(
  record: Record<string, unknown>,
  key: string,
  path: string,
  violations: Violations,
  read: (value: unknown) => Read<T>,
): { readonly value: T } | undefined => {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  const result = read(value);
  if (typeof result === 'string') {
    violations.push({ path, message: result });
    return undefined;
  }
  return result;
};

/** A number read from JSON that must be a whole number in [min, max]. */
const wholeNumber =
  (min: number, max: number, unit: string) =>
  (value: unknown): Read<number> =>
    typeof value !== 'number' || !Number.isInteger(value)
      ? `must be a whole number of ${unit}`
      : value < min
        ? `must be at least ${min}`
        : value > max
          ? `must be at most ${max}`
          : { value };

const readWhole = (
  record: Record<string, unknown>,
  key: string,
  path: string,
  violations: Violations,
  min: number,
  max: number,
  unit: string,
): number | undefined => optional(record, key, path, violations, wholeNumber(min, max, unit))?.value;

const validateQuery = (raw: unknown, violations: Violations): SavedSearchQuery | undefined => {
  if (!isRecord(raw)) {
    violations.push({ path: 'query', message: 'must be an object' });
    return undefined;
  }
  if (JSON.stringify(raw).length > SUBSCRIPTION_LIMITS.queryMaxBytes) {
    violations.push({
      path: 'query',
      message: `must be at most ${SUBSCRIPTION_LIMITS.queryMaxBytes} bytes as JSON`,
    });
    return undefined;
  }
  const category = optional(raw, 'category', 'query/category', violations, (value) =>
    typeof value === 'string' && isCategory(value) ? { value } : `must be one of ${CATEGORIES.join(', ')}`,
  )?.value;
  const condition = optional(raw, 'condition', 'query/condition', violations, (value) =>
    typeof value === 'string' && isCondition(value) ? { value } : `must be one of ${CONDITIONS.join(', ')}`,
  )?.value;
  const search = optional(raw, 'search', 'query/search', violations, (value) =>
    typeof value !== 'string'
      ? 'must be a string'
      : [...value].length > SUBSCRIPTION_LIMITS.searchMaxLength
        ? `must be at most ${SUBSCRIPTION_LIMITS.searchMaxLength} characters`
        : { value: value.trim() },
  )?.value;
  const maxCents = LISTING_LIMITS.maxPriceCents;
  const minPriceCents = readWhole(raw, 'minPrice', 'query/minPrice', violations, 0, maxCents, 'cents');
  const maxPriceCents = readWhole(raw, 'maxPrice', 'query/maxPrice', violations, 0, maxCents, 'cents');
  if (minPriceCents !== undefined && maxPriceCents !== undefined && minPriceCents > maxPriceCents) {
    violations.push({ path: 'query/maxPrice', message: 'must not be below minPrice' });
  }
  const maxUnits = LISTING_LIMITS.maxQuantity;
  const minQuantity = readWhole(raw, 'minQuantity', 'query/minQuantity', violations, 1, maxUnits, 'units');
  const sellerCountry = optional(raw, 'sellerCountry', 'query/sellerCountry', violations, (value) =>
    typeof value === 'string' && COUNTRY.test(value)
      ? { value: value.toUpperCase() }
      : 'must be a two-letter country code',
  )?.value;
  const moqRange = optional(raw, 'moqRange', 'query/moqRange', violations, (value) => {
    if (!isRecord(value)) return 'must be an object {min, max}';
    const min = readWhole(value, 'min', 'query/moqRange/min', violations, 1, maxUnits, 'units');
    const max = readWhole(value, 'max', 'query/moqRange/max', violations, 1, maxUnits, 'units');
    if (min !== undefined && max !== undefined && min > max) {
      violations.push({ path: 'query/moqRange/max', message: 'must not be below min' });
    }
    return { value: { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) } };
  })?.value;
  const bulkDealsOnly =
    optional(raw, 'bulkDealsOnly', 'query/bulkDealsOnly', violations, (value) =>
      typeof value === 'boolean' ? { value } : 'must be true or false',
    )?.value ?? false;
  return {
    ...(category === undefined ? {} : { category }),
    ...(condition === undefined ? {} : { condition }),
    ...(search === undefined || search === '' ? {} : { search }),
    ...(minPriceCents === undefined ? {} : { minPriceCents }),
    ...(maxPriceCents === undefined ? {} : { maxPriceCents }),
    ...(minQuantity === undefined ? {} : { minQuantity }),
    ...(sellerCountry === undefined ? {} : { sellerCountry }),
    ...(moqRange === undefined || (moqRange.min === undefined && moqRange.max === undefined)
      ? {}
      : { moqRange }),
    bulkDealsOnly,
    original: raw,
  };
};

/** http(s) only: a webhook target must be a public URL; the address itself is checked at delivery time. */
const validateWebhookUrl = (value: unknown): string | undefined => {
  if (typeof value !== 'string') return undefined;
  if (value.length > SUBSCRIPTION_LIMITS.urlMaxLength) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
};

const validateChannel = (
  raw: unknown,
  path: string,
  anonymous: boolean,
  violations: Violations,
): Channel | undefined => {
  if (!isRecord(raw)) {
    violations.push({ path, message: 'must be an object {type, ...}' });
    return undefined;
  }
  switch (raw['type']) {
    case 'webhook': {
      const url = validateWebhookUrl(raw['url']);
      if (url === undefined) {
        violations.push({
          path: `${path}/url`,
          message: `must be an absolute http or https URL of at most ${SUBSCRIPTION_LIMITS.urlMaxLength} characters`,
        });
        return undefined;
      }
      return { type: 'webhook', url };
    }
    case 'email': {
      const email = raw['email'];
      if (
        typeof email !== 'string' ||
        email.length > SUBSCRIPTION_LIMITS.emailMaxLength ||
        !SIMPLE_EMAIL.test(email)
      ) {
        violations.push({ path: `${path}/email`, message: 'must be an email address' });
        return undefined;
      }
      return { type: 'email', email };
    }
    case 'mcp_resource':
      if (anonymous) {
        violations.push({
          path: `${path}/type`,
          message: 'mcp_resource needs an API key or agent token: only the owner can read the resource',
        });
        return undefined;
      }
      return { type: 'mcp_resource' };
    default:
      violations.push({ path: `${path}/type`, message: 'must be one of webhook, email, mcp_resource' });
      return undefined;
  }
};

/**
 * What makes two channels the same destination: the webhook URL, the email's mailbox (`mailboxOf`: case and
 * `+tag` folded) or the one resource. One destination once per subscription, so one address cannot take all five
 * channels and receive each match five times (docs/security.md, "API6").
 */
const destinationOf = (channel: Channel): string => {
  switch (channel.type) {
    case 'webhook':
      return `webhook:${channel.url}`;
    case 'email':
      return `email:${mailboxOf(channel.email)}`;
    case 'mcp_resource':
      return 'mcp_resource';
  }
};

const refuseRepeatedDestinations = (channels: readonly (Channel | undefined)[], violations: Violations) => {
  const firstIndexOf = new Map<string, number>();
  channels.forEach((channel, index) => {
    if (channel === undefined) return;
    const destination = destinationOf(channel);
    const first = firstIndexOf.get(destination);
    if (first === undefined) firstIndexOf.set(destination, index);
    else
      violations.push({ path: `channels/${index}`, message: `repeats the destination of channels/${first}` });
  });
};

/**
 * Validates what subscribe_to_query received, naming every offending field (`query/minPrice`,
 * `channels/1/url`). Anonymous callers may use webhook and email channels only; no destination twice.
 */
export const validateSubscriptionDraft = (
  draft: SubscriptionDraft,
  owner: { readonly anonymous: boolean },
): { query: SavedSearchQuery; channels: Channel[] } => {
  const violations: Violations = [];
  const query = validateQuery(draft.query, violations);
  const { minChannels, maxChannels } = SUBSCRIPTION_LIMITS;
  if (draft.channels.length < minChannels || draft.channels.length > maxChannels) {
    violations.push({ path: 'channels', message: `must have ${minChannels} to ${maxChannels} items` });
  }
  const channels = draft.channels
    .slice(0, maxChannels)
    .map((channel, index) => validateChannel(channel, `channels/${index}`, owner.anonymous, violations));
  refuseRepeatedDestinations(channels, violations);
  if (violations.length > 0 || query === undefined) {
    throw validationError(
      `invalid subscription: ${violations.map(({ path, message }) => `${path} ${message}`).join('; ')}`,
      violations,
    );
  }
  return { query, channels: channels.filter((channel): channel is Channel => channel !== undefined) };
};
