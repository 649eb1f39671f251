import type { Decider } from '@marketplace/eventsourcing';
import { conflict, notFound } from '@marketplace/platform';
import type {
  CancelCheckout,
  CheckoutCommand,
  StartCompletion,
  UpdateCheckout,
} from './checkout.commands.js';
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
    case 'canceled':
      throw conflict(`checkout ${session.checkoutId} was canceled; create a new checkout session`);
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

/** A session bound to a buyer is invisible to every other caller, and one priced anonymously to everyone. */
const ownSession = (session: CheckoutSession, buyerAccountId: number): CheckoutSession => {
  if (session.buyerAccountId !== buyerAccountId) throw notFound(`no checkout session ${session.checkoutId}`);
  return session;
};

/** Only an open session changes: not once completion started, nor after it ended, was canceled or expired. */
const updateCheckout = (command: UpdateCheckout, current: CheckoutSession): CheckoutEvent[] => {
  const session = ownSession(current, command.data.buyerAccountId);
  switch (session.status) {
    case 'completing':
    case 'completed':
      throw conflict(`checkout ${session.checkoutId} is ${session.status}: it can no longer be changed`);
    case 'canceled':
      throw conflict(`checkout ${session.checkoutId} was canceled; create a new checkout session`);
    case 'ready_for_complete':
    case 'requires_escalation':
      if (command.metadata.now > session.expiresAt) {
        throw conflict(`checkout ${session.checkoutId} expired; create a new checkout session`);
      }
      return [
        {
          type: 'CheckoutUpdated',
          data: {
            session: {
              ...command.data.session,
              // What pricing does not decide stays the session's own.
              checkoutId: session.checkoutId,
              buyerAccountId: session.buyerAccountId,
              createdAt: session.createdAt,
              attempt: session.attempt,
              orderIds: session.orderIds,
            },
          },
        },
      ];
  }
};

/** Cancels an open session; a canceled one stays as it is. Completion, once started, is not undone here. */
const cancelCheckout = (command: CancelCheckout, current: CheckoutSession): CheckoutEvent[] => {
  const session = ownSession(current, command.data.buyerAccountId);
  switch (session.status) {
    case 'completing':
    case 'completed':
      throw conflict(`checkout ${session.checkoutId} is ${session.status}: it can no longer be canceled`);
    case 'canceled':
      return [];
    case 'ready_for_complete':
    case 'requires_escalation':
      return [{ type: 'CheckoutCanceled', data: {} }];
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
    case 'UpdateCheckout':
      return updateCheckout(command, sessionOf(state));
    case 'CancelCheckout':
      return cancelCheckout(command, sessionOf(state));
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
    case 'CheckoutUpdated':
      return event.data.session;
    case 'CheckoutCanceled':
      return { ...session, status: 'canceled', messages: [] };
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
