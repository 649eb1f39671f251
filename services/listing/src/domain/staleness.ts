import { escapeHtml } from '@marketplace/platform';
import { LISTING_STALENESS } from '@marketplace/vocabulary';

const DAY_MS = 24 * 60 * 60 * 1_000;

/** How long after its last availability confirmation a listing becomes stale. */
export const STALE_AFTER_MS = LISTING_STALENESS.staleAfterDays * DAY_MS;

/** The newest confirmation time that is stale at `now`: listings confirmed at or before it are stale. */
export const staleCutoff = (now: number): number => now - STALE_AFTER_MS;

/**
 * A stale period is identified by the confirmation that started it: a new confirmation starts a new period, so
 * the same listing is reminded again 90 days after it, and never twice for one confirmation.
 */
export interface StalePeriod {
  readonly productId: string;
  readonly confirmedAt: number;
}

/** What the reminder says; pure, so its wording is tested without a mail server. */
export interface StalenessReminder {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** Stable per period: a reminder sent again after a crash is recognisably the same message. */
  readonly messageId: string;
}

export const stalenessReminder = (input: {
  readonly period: StalePeriod;
  readonly listingName: string;
  readonly sellerName: string;
  readonly listingUrl: string;
  readonly messageDomain: string;
}): StalenessReminder => {
  const { period, listingName, sellerName, listingUrl } = input;
  const confirmed = new Date(period.confirmedAt).toISOString().slice(0, 10);
  const days = LISTING_STALENESS.staleAfterDays;
  const subject = `Is "${listingName}" still available? (${period.productId})`;
  const text = [
    `Hello ${sellerName},`,
    '',
    `Your listing "${listingName}" (${period.productId}) has had no availability confirmation since ${confirmed}, ` +
      `more than ${days} days ago. Buyers' agents rely on it being current.`,
    '',
    `Listing: ${listingUrl}`,
    '',
    'Any update confirms it: PUT /api/products/{id}, or PATCH /api/products/{id}/quantity (0 marks it sold out).',
  ].join('\n');
  const html = [
    `<p>Hello ${escapeHtml(sellerName)},</p>`,
    `<p>Your listing <strong>${escapeHtml(listingName)}</strong> (${period.productId}) has had no availability ` +
      `confirmation since ${confirmed}, more than ${days} days ago. Buyers' agents rely on it being current.</p>`,
    `<p><a href="${escapeHtml(listingUrl)}">${escapeHtml(listingUrl)}</a></p>`,
    '<p>Any update confirms it: <code>PUT /api/products/{id}</code>, or ' +
      '<code>PATCH /api/products/{id}/quantity</code> (0 marks it sold out).</p>',
  ].join('\n');
  return {
    subject,
    text,
    html,
    messageId: `<staleness.${period.productId}.${period.confirmedAt}@${input.messageDomain}>`,
  };
};
