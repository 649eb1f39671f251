import type { Command } from '@marketplace/eventsourcing';
import type { CheckoutSession } from './checkout.events.js';

export type CreateCheckout = Command<'CreateCheckout', { readonly session: CheckoutSession }>;
export type StartCompletion = Command<'StartCompletion', { readonly buyerAccountId: number }>;
export type FailCompletion = Command<'FailCompletion', { readonly attempt: number; readonly reason: string }>;
export type FinishCompletion = Command<
  'FinishCompletion',
  { readonly attempt: number; readonly orderIds: readonly number[] }
>;

/** The buyer's session priced again: `session` is what the new pricing decided (lines, totals, status, expiry). */
export type UpdateCheckout = Command<
  'UpdateCheckout',
  { readonly buyerAccountId: number; readonly session: CheckoutSession }
>;
export type CancelCheckout = Command<'CancelCheckout', { readonly buyerAccountId: number }>;

export type CheckoutCommand =
  CreateCheckout | StartCompletion | FailCompletion | FinishCompletion | UpdateCheckout | CancelCheckout;
