import type { Decider } from '@marketplace/eventsourcing';
import { conflict, notFound } from '@marketplace/platform';
import type { CheckoutCommand, StartCompletion } from './checkout.commands.js';
import type { CheckoutEvent, CheckoutSession } from './checkout.events.js';

export type CheckoutState =
  { readonly status: 'absent' } | { readonly status: 'created'; readonly session: CheckoutSession };

const sessionOf = (state: CheckoutState): CheckoutSession => {
  if (state.status === 'absent') throw notFound('no such checkout session');
  return state.session;
};

const startCompletion = (command: StartCompletion, session: CheckoutSession): CheckoutEvent[] => {
  const { buyerAccountId } = command.data;
  // A session bound to a buyer is invisible to every other caller.
  if (session.buyerAccountId !== undefined && session.buyerAccountId !== buyerAccountId) {
    throw notFound(`no checkout session ${session.checkoutId}`);
  }
  switch (session.status) {
    case 'requires_escalation':
      throw conflict(`checkout ${session.checkoutId} needs a quote: ${session.messages.join(' ')}`);
    // Another request is completing it, or did: carry on with the same attempt (its reservations are idempotent).
    case 'completing':
    case 'completed':
      return [];
    case 'ready_for_complete':
      if (command.metadata.now > session.expiresAt) {
        throw conflict(`checkout ${session.checkoutId} expired; create a new checkout session`);
      }
      return [{ type: 'CheckoutCompletionStarted', data: { attempt: session.attempt + 1, buyerAccountId } }];
  }
};

const decide = (command: CheckoutCommand, state: CheckoutState): readonly CheckoutEvent[] => {
  switch (command.type) {
    case 'CreateCheckout':
      if (state.status !== 'absent')
        throw conflict(`checkout ${command.data.session.checkoutId} already exists`);
      return [{ type: 'CheckoutCreated', data: { session: command.data.session } }];
    case 'StartCompletion':
      return startCompletion(command, sessionOf(state));
    case 'FailCompletion': {
      const session = sessionOf(state);
      // Only the attempt in progress can fail; a stale one (already finished or failed) changes nothing.
      if (session.status !== 'completing' || session.attempt !== command.data.attempt) return [];
      return [{ type: 'CheckoutCompletionFailed', data: command.data }];
    }
    case 'FinishCompletion': {
      const session = sessionOf(state);
      if (session.status !== 'completing' || session.attempt !== command.data.attempt) {
        throw conflict(
          `checkout ${session.checkoutId} is no longer completing attempt ${command.data.attempt}`,
        );
      }
      return [{ type: 'CheckoutCompleted', data: { orderIds: command.data.orderIds } }];
    }
  }
};

const evolveSession = (session: CheckoutSession, event: CheckoutEvent): CheckoutSession => {
  switch (event.type) {
    case 'CheckoutCreated':
      return session;
    case 'CheckoutCompletionStarted':
      return {
        ...session,
        status: 'completing',
        attempt: event.data.attempt,
        buyerAccountId: event.data.buyerAccountId,
      };
    case 'CheckoutCompletionFailed':
      return { ...session, status: 'ready_for_complete', messages: [event.data.reason] };
    case 'CheckoutCompleted':
      return { ...session, status: 'completed', orderIds: event.data.orderIds, messages: [] };
  }
};

export const checkoutDecider: Decider<CheckoutCommand, CheckoutEvent, CheckoutState> = {
  decide,
  evolve: (state, event) => {
    if (event.type === 'CheckoutCreated') return { status: 'created', session: event.data.session };
    if (state.status === 'absent') throw new Error(`${event.type} before CheckoutCreated`);
    return { status: 'created', session: evolveSession(state.session, event) };
  },
  initialState: () => ({ status: 'absent' }),
};
