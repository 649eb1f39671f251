import { z } from 'zod';
import { randomUUID } from 'node:crypto';
import type { Transaction } from '@marketplace/database';
import type { CommandContext, RecordIdempotencyKey } from '@marketplace/eventsourcing';
import { fold, handleCommand, idempotencyScopeOf, idempotentRequestOf } from '@marketplace/eventsourcing';
import type { FieldViolation } from '@marketplace/platform';
import { conflict, isAppError, notFound, parseProductId, validationError } from '@marketplace/platform';
import type { CheckoutCommand } from '../domain/checkout.commands.js';
import type { CheckoutEvent, CheckoutSession } from '../domain/checkout.events.js';
import { isCheckoutId, reservationIdOf } from '../domain/checkout.events.js';
import type { CheckoutState } from '../domain/checkout.decider.js';
import { checkoutDecider } from '../domain/checkout.decider.js';
import type { AgreedQuote, LineToPrice } from '../domain/checkout.rules.js';
import { CHECKOUT_LIMITS, priceCheckout } from '../domain/checkout.rules.js';
import type { BuyerContact, Order } from '../domain/order.events.js';
import { orderDecider, shipByOf } from '../domain/order.decider.js';
import { PAYMENT_TERMS, streamIdOfOrder } from '../domain/order.rules.js';
import type { OrderDependencies } from './order.dependencies.js';
import type { QuoteRedemption } from './ports.js';
import { CHECKOUT_STREAM_TYPE, ORDER_STREAM_TYPE } from './order.dependencies.js';
import { isCountryCode } from '@marketplace/vocabulary';

export interface CheckoutLineInput {
  readonly productId: string;
  readonly quantity: number;
  readonly quoteRequestId?: number | undefined;
}

export interface CreateCheckoutInput extends CommandContext {
  readonly lines: readonly CheckoutLineInput[];
  readonly buyer?: BuyerContact | undefined;
  readonly buyerAccountId?: number | undefined;
  readonly shippingCountry?: string | undefined;
  /**
   * The client's key: a repeat of the same request answers the session it created, as it is now
   * (docs/idempotency.md). Scoped by the buyer's account, else the buyer's email, else shared by anonymous callers.
   */
  readonly idempotencyKey?: string | undefined;
}

export interface CompletedCheckout {
  readonly session: CheckoutSession;
  readonly orders: Order[];
}

/** The same rule the gateway's schemas apply to an email address (zod's). */
const emailAddress = z.email();
/** How many times a reservation refused as a conflict is retried while the listing still has the units. */
const RESERVE_ATTEMPTS = 5;

const validateInput = (input: CreateCheckoutInput): void => {
  const violations: FieldViolation[] = [];
  if (input.lines.length < 1 || input.lines.length > CHECKOUT_LIMITS.maxLines) {
    violations.push({ path: 'line_items', message: `must have 1 to ${CHECKOUT_LIMITS.maxLines} items` });
  }
  input.lines.forEach((line, index) => {
    if (parseProductId(line.productId) === undefined) {
      violations.push({ path: `line_items/${index}/product_id`, message: 'must look like product_<number>' });
    }
    if (
      !Number.isSafeInteger(line.quantity) ||
      line.quantity < 1 ||
      line.quantity > CHECKOUT_LIMITS.maxQuantity
    ) {
      violations.push({
        path: `line_items/${index}/quantity`,
        message: `must be a whole number from 1 to ${CHECKOUT_LIMITS.maxQuantity}`,
      });
    }
  });
  const firstLineOfQuote = new Map<number, number>();
  input.lines.forEach((line, index) => {
    if (line.quoteRequestId === undefined) return;
    const first = firstLineOfQuote.get(line.quoteRequestId);
    if (first === undefined) {
      firstLineOfQuote.set(line.quoteRequestId, index);
      return;
    }
    violations.push({
      path: `line_items/${index}/quote_request_id`,
      message: `quote request ${line.quoteRequestId} is already on line_items/${first}: a quote is used once`,
    });
  });
  if (input.buyer !== undefined && !emailAddress.safeParse(input.buyer.email).success) {
    violations.push({ path: 'buyer/email', message: 'must be an email address' });
  }
  if (input.shippingCountry !== undefined && !isCountryCode(input.shippingCountry)) {
    violations.push({ path: 'shipping_country', message: 'must be an ISO 3166-1 alpha-2 code' });
  }
  if (violations.length > 0) throw validationError('invalid checkout', violations);
};

/**
 * The quote of a line, checked: the caller's own (by account: an email in a request proves nothing, and an
 * anonymous request is first claimed with its claim token), for this product, answered with a price, not exceeded.
 */
const agreedQuoteOf = async (
  deps: OrderDependencies,
  input: CreateCheckoutInput,
  line: CheckoutLineInput,
  index: number,
): Promise<AgreedQuote | FieldViolation> => {
  const path = `line_items/${index}/quote_request_id`;
  const quoteRequestId = line.quoteRequestId;
  if (quoteRequestId === undefined) throw new Error('agreedQuoteOf needs a quote request id');
  const quote = await deps.quotes.get(quoteRequestId);
  const callerOwns = quote?.buyerAccountId !== undefined && quote.buyerAccountId === input.buyerAccountId;
  // Someone else's quote reads exactly like a missing one.
  if (!quote || !callerOwns) return { path, message: 'no such quote request of this buyer' };
  if (quote.productId !== line.productId) return { path, message: `is a quote for ${quote.productId}` };
  if (quote.agreedUnitPriceCents === undefined) {
    return { path, message: 'has no agreed price: the seller has not accepted or countered it' };
  }
  const now = deps.clock.now();
  if (quote.offerExpiresAt !== undefined && quote.offerExpiresAt <= now) {
    return {
      path,
      message: `the seller's price expired at ${new Date(quote.offerExpiresAt).toISOString()}; ask again with request_quote`,
    };
  }
  if (line.quantity > quote.quantity) {
    return { path: `line_items/${index}/quantity`, message: `must be at most the quoted ${quote.quantity}` };
  }
  return {
    quoteRequestId: quote.quoteRequestId,
    productId: quote.productId,
    quantity: quote.quantity,
    unitPriceCents: quote.agreedUnitPriceCents,
    offerExpiresAt: quote.offerExpiresAt,
    freight: quote.freight,
  };
};

const linesToPrice = async (deps: OrderDependencies, input: CreateCheckoutInput): Promise<LineToPrice[]> => {
  const violations: FieldViolation[] = [];
  const priced = await Promise.all(
    input.lines.map(async (line, index): Promise<LineToPrice | undefined> => {
      const listing = await deps.listings.get(line.productId);
      if (!listing) {
        violations.push({ path: `line_items/${index}/product_id`, message: `no product ${line.productId}` });
        return undefined;
      }
      if (line.quoteRequestId === undefined) return { listing, quantity: line.quantity };
      const quote = await agreedQuoteOf(deps, input, line, index);
      if ('path' in quote) {
        violations.push(quote);
        return undefined;
      }
      return { listing, quantity: line.quantity, quote };
    }),
  );
  if (violations.length > 0) throw validationError('invalid checkout', violations);
  const lines = priced.filter((line): line is LineToPrice => line !== undefined);
  const used = (await deps.quoteRedemptions.find(deps.db, quotedIdsOf(input.lines)))[0];
  if (used !== undefined) throw usedQuote(used);
  return lines;
};

const quotedIdsOf = (lines: readonly { readonly quoteRequestId?: number | undefined }[]): number[] =>
  lines.flatMap(({ quoteRequestId }) => (quoteRequestId === undefined ? [] : [quoteRequestId]));

/** The 409 of a quote whose price a checkout already holds or used (docs/specification.md, "Quotes"). */
const usedQuote = ({ quoteRequestId, orderId }: QuoteRedemption) =>
  conflict(
    orderId === undefined
      ? `quote request ${quoteRequestId} is being used by another checkout; a quote's price is used once`
      : `quote request ${quoteRequestId} was already used by order ${orderId}; a quote's price is used once`,
  );

/**
 * Prices a checkout session from the listings (and agreed quotes) and records it, once per idempotency key: a
 * repeat answers the session the key created (without pricing again), another request with that key is an
 * idempotency conflict. With `instantOnly` (quick_buy) a line that is not instant-checkout, over the bulk
 * threshold or above stock is refused before anything is recorded, the key included.
 */
export const createCheckout = async (
  deps: OrderDependencies,
  input: CreateCheckoutInput,
  { instantOnly = false }: { readonly instantOnly?: boolean } = {},
): Promise<CheckoutSession> => {
  validateInput(input);
  const idempotent = idempotentRequestOf(input.idempotencyKey, {
    path: 'idempotency_key',
    scope: idempotencyScopeOf({ accountId: input.buyerAccountId, email: input.buyer?.email }),
    // A quick_buy and a checkout are different requests even for the same line.
    operation: instantOnly ? 'QuickBuy' : 'CreateCheckout',
    request: {
      lines: input.lines,
      buyer: input.buyer,
      buyerAccountId: input.buyerAccountId,
      shippingCountry: input.shippingCountry,
    },
  });
  return deps.idempotencyKeys.createOnce(idempotent, {
    create: (recordKey) => priceCheckoutSession(deps, input, instantOnly, recordKey),
    replay: async (checkoutId) => {
      const session = await currentSession(deps, checkoutId);
      if (session === undefined) throw new Error(`idempotency key of ${checkoutId}, which has no session`);
      return session;
    },
  });
};

/** A new session as `priced` decided it, from the request's buyer and shipping country. */
const sessionOfPricing = (
  deps: OrderDependencies,
  checkoutId: string,
  input: Pick<CreateCheckoutInput, 'buyer' | 'buyerAccountId' | 'shippingCountry'>,
  toPrice: readonly LineToPrice[],
  priced: ReturnType<typeof priceCheckout>,
): CheckoutSession => {
  const now = deps.clock.now();
  return {
    checkoutId,
    status: priced.escalations.length > 0 ? 'requires_escalation' : 'ready_for_complete',
    lines: priced.lines,
    subtotalCents: priced.subtotalCents,
    freightCents: priced.freightCents,
    currency: priced.currency,
    messages: priced.escalations,
    buyer: input.buyer,
    buyerAccountId: input.buyerAccountId,
    shippingCountry: input.shippingCountry,
    createdAt: now,
    // A session at a quoted price lasts no longer than the seller's offer (docs/specification.md, "Quotes").
    expiresAt: Math.min(
      now + deps.checkoutTtlMs,
      ...toPrice.map(({ quote }) => quote?.offerExpiresAt ?? Infinity),
    ),
    attempt: 0,
    orderIds: [],
  };
};

const priceCheckoutSession = async (
  deps: OrderDependencies,
  input: CreateCheckoutInput,
  instantOnly: boolean,
  recordKey: RecordIdempotencyKey | undefined,
): Promise<CheckoutSession> => {
  const toPrice = await linesToPrice(deps, input);
  const priced = priceCheckout(deps.bulkThreshold, toPrice);
  if (instantOnly) {
    // A quoted line needs no instant checkout: the seller agreed to that sale when answering the quote.
    const notInstant = toPrice.find(({ listing, quote }) => !listing.instantCheckout && quote === undefined);
    if (notInstant) {
      throw conflict(
        `the seller of ${notInstant.listing.productId} has not enabled instant checkout; ask for a price with request_quote`,
      );
    }
    if (priced.escalations.length > 0) throw conflict(priced.escalations.join(' '));
  }
  const checkoutId = `checkout_${randomUUID()}`;
  const session = sessionOfPricing(deps, checkoutId, input, toPrice, priced);
  const command = { type: 'CreateCheckout', data: { session } } as const;
  if (recordKey === undefined) {
    await runCheckoutCommand(deps, input, checkoutId, command);
    return session;
  }
  await deps.db.transaction(async (tx) => {
    await recordKey(tx, checkoutId);
    await runCheckoutCommand(deps, input, checkoutId, command, { tx });
  });
  return session;
};

const runCheckoutCommand = async (
  deps: OrderDependencies,
  context: CommandContext,
  checkoutId: string,
  command: Omit<CheckoutCommand, 'metadata'>,
  { tx, retryOnConflict }: { readonly tx?: Transaction; readonly retryOnConflict?: number } = {},
): Promise<{ session: CheckoutSession; appended: boolean }> => {
  const { state, events } = await handleCommand({
    store: deps.store,
    decider: checkoutDecider,
    streamId: checkoutId,
    streamType: CHECKOUT_STREAM_TYPE,
    tx,
    retryOnConflict,
    command: {
      ...command,
      metadata: {
        now: deps.clock.now(),
        actor: context.actor,
        correlationId: context.correlationId,
        traceparent: context.traceparent,
      },
    } as CheckoutCommand,
  });
  return { session: sessionOf(state), appended: events.length > 0 };
};

const sessionOf = (state: CheckoutState): CheckoutSession => {
  if (state.status === 'absent') throw new Error('a checkout command left no session');
  return state.session;
};

const ordersOf = async (deps: OrderDependencies, session: CheckoutSession): Promise<Order[]> => {
  const found = await Promise.all(session.orderIds.map((orderId) => deps.orders.get(deps.db, orderId)));
  return found.flatMap((entry) => (entry ? [entry.order] : []));
};

/**
 * Completes a session: records the attempt, reserves each line's stock, then places one order per line and
 * marks the session completed in one transaction. Idempotent: a completed session answers its orders.
 */
export const completeCheckout = async (
  deps: OrderDependencies,
  input: CommandContext & {
    readonly checkoutId: string;
    readonly buyerAccountId: number;
    /** Recorded with the attempt's start; a repeat completes again, which answers the orders (docs/idempotency.md). */
    readonly idempotencyKey?: string | undefined;
  },
): Promise<CompletedCheckout> => {
  const idempotent = idempotentRequestOf(input.idempotencyKey, {
    path: 'idempotency_key',
    scope: idempotencyScopeOf({ accountId: input.buyerAccountId }),
    operation: 'CompleteCheckout',
    request: { checkoutId: input.checkoutId, buyerAccountId: input.buyerAccountId },
  });
  return deps.idempotencyKeys.createOnce(idempotent, {
    create: (recordKey) => completeOnce(deps, input, recordKey),
    replay: () => completeOnce(deps, input, undefined),
  });
};

const completeOnce = async (
  deps: OrderDependencies,
  input: CommandContext & { readonly checkoutId: string; readonly buyerAccountId: number },
  recordKey: RecordIdempotencyKey | undefined,
): Promise<CompletedCheckout> => {
  if (!isCheckoutId(input.checkoutId)) throw invalidCheckoutId();
  const { session } = await deps.db.transaction(async (tx) => {
    await recordKey?.(tx, input.checkoutId);
    const started = await runCheckoutCommand(
      deps,
      input,
      input.checkoutId,
      { type: 'StartCompletion', data: { buyerAccountId: input.buyerAccountId } },
      // Another request started this attempt first: decided again, the session is completing and it carries on.
      { tx, retryOnConflict: 1 },
    );
    if (started.appended) {
      const now = deps.clock.now();
      await deps.completions.started(tx, input.checkoutId, started.session.attempt, now);
      // Held before any stock is reserved: of two checkouts racing on one quote, the second stops here.
      const taken = await deps.quoteRedemptions.hold(
        tx,
        input.checkoutId,
        quotedIdsOf(started.session.lines),
        now,
      );
      if (taken[0] !== undefined) throw usedQuote(taken[0]);
    }
    return started;
  });
  if (session.status === 'completed') return { session, orders: await ordersOf(deps, session) };
  return finishAttempt(deps, input, session);
};

/** Reserves a line's units, retrying refusals that were contention rather than a lack of stock. */
const reserveLine = async (
  deps: OrderDependencies,
  productId: string,
  quantity: number,
  reservationId: string,
) => {
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.listings.reserve(productId, quantity, reservationId);
      return;
    } catch (error) {
      if (!isAppError(error) || error.kind !== 'conflict' || attempt >= RESERVE_ATTEMPTS) throw error;
      const listing = await deps.listings.get(productId);
      if (!listing || listing.quantity < quantity) throw error;
    }
  }
};

/**
 * Runs (or re-runs, after a crash) the session's current attempt. Reservation ids are derived from the session
 * and the attempt, so re-running never reserves twice. Insufficient stock on any line releases the lines already
 * reserved and fails the attempt; any other failure leaves the attempt to the recovery job.
 */
export const finishAttempt = async (
  deps: OrderDependencies,
  context: CommandContext,
  session: CheckoutSession,
): Promise<CompletedCheckout> => {
  const { attempt, checkoutId } = session;
  const reservationIds = session.lines.map((_, index) => reservationIdOf(checkoutId, attempt, index));
  for (const [index, line] of session.lines.entries()) {
    const reservationId = reservationIds[index] ?? '';
    try {
      await reserveLine(deps, line.productId, line.quantity, reservationId);
    } catch (error) {
      if (!isAppError(error) || error.kind !== 'conflict') throw error;
      const reason = `line ${index + 1} (${line.productId}): not enough stock for ${line.quantity} units (${error.message})`;
      // Released before the failure is recorded: a crash in between re-runs this attempt, which fails again.
      for (const [reserved, earlier] of session.lines.slice(0, index).entries()) {
        await deps.listings.release(earlier.productId, reservationIds[reserved] ?? '');
      }
      await deps.db.transaction(async (tx) => {
        await runCheckoutCommand(
          deps,
          context,
          checkoutId,
          { type: 'FailCompletion', data: { attempt, reason } },
          { tx },
        );
        await deps.completions.ended(tx, checkoutId);
        await deps.quoteRedemptions.release(tx, checkoutId);
      });
      throw conflict(`${reason}; ask the seller with request_quote`);
    }
  }
  try {
    return await deps.db.transaction(async (tx) => placeOrders(deps, context, session, reservationIds, tx));
  } catch (error) {
    // Another request (or the recovery job) placed this attempt's orders first: answer them.
    const current = await currentSession(deps, checkoutId);
    if (current?.status === 'completed') return { session: current, orders: await ordersOf(deps, current) };
    throw error;
  }
};

const placeOrders = async (
  deps: OrderDependencies,
  context: CommandContext,
  session: CheckoutSession,
  reservationIds: readonly string[],
  tx: Transaction,
): Promise<CompletedCheckout> => {
  const now = deps.clock.now();
  const buyerAccountId = session.buyerAccountId;
  if (buyerAccountId === undefined)
    throw new Error(`checkout ${session.checkoutId} is completing without a buyer`);
  const orders: Order[] = [];
  for (const [index, line] of session.lines.entries()) {
    const orderId = await deps.orders.allocateOrderId(tx);
    const { state, version } = await handleCommand({
      store: deps.store,
      decider: orderDecider,
      streamId: streamIdOfOrder(orderId),
      streamType: ORDER_STREAM_TYPE,
      tx,
      command: {
        type: 'PlaceOrder',
        data: {
          order: {
            orderId,
            checkoutId: session.checkoutId,
            reservationId: reservationIds[index] ?? '',
            productId: line.productId,
            productName: line.productName,
            sellerAccountId: line.sellerAccountId,
            buyerAccountId,
            buyer: session.buyer ?? { email: '' },
            quantity: line.quantity,
            unitPriceCents: line.unitPriceCents,
            totalCents: line.lineTotalCents + (line.freightCents ?? 0),
            freightCents: line.freightCents ?? 0,
            currency: session.currency,
            quoteRequestId: line.quoteRequestId,
            shippingCountry: session.shippingCountry,
            paymentTerms: PAYMENT_TERMS,
            placedAt: now,
            shipBy: shipByOf(now),
          },
        },
        metadata: {
          now,
          actor: context.actor,
          correlationId: context.correlationId,
          traceparent: context.traceparent,
        },
      },
    });
    if (state.status !== 'placed') throw new Error(`PlaceOrder left order ${orderId} absent`);
    await deps.orders.save(tx, { order: state.order, version });
    if (line.quoteRequestId !== undefined) {
      await deps.quoteRedemptions.redeem(tx, session.checkoutId, line.quoteRequestId, orderId);
    }
    orders.push(state.order);
  }
  const finished = await runCheckoutCommand(
    deps,
    context,
    session.checkoutId,
    { type: 'FinishCompletion', data: { attempt: session.attempt, orderIds: orders.map((o) => o.orderId) } },
    { tx },
  );
  await deps.completions.ended(tx, session.checkoutId);
  return { session: finished.session, orders };
};

const currentSession = async (
  deps: OrderDependencies,
  checkoutId: string,
): Promise<CheckoutSession | undefined> => {
  const { events } = await deps.store.readStream<CheckoutEvent>(checkoutId);
  if (events.length === 0) return undefined;
  const state = fold(
    checkoutDecider,
    events.map(({ type, data }) => ({ type, data }) as CheckoutEvent),
  );
  return state.status === 'created' ? state.session : undefined;
};

const invalidCheckoutId = () =>
  validationError('invalid checkout_id', [{ path: 'checkout_id', message: 'must be a checkout session id' }]);

export interface UpdateCheckoutInput extends CommandContext {
  readonly checkoutId: string;
  readonly buyerAccountId: number;
  /** The new lines; absent keeps the session's own (priced again all the same). */
  readonly lines?: readonly CheckoutLineInput[] | undefined;
  /** Replaces the buyer's contact when given. */
  readonly buyer?: BuyerContact | undefined;
  /** Replaces the shipping country when given. */
  readonly shippingCountry?: string | undefined;
  readonly idempotencyKey?: string | undefined;
}

/**
 * The buyer's own open session priced again, by the rules of createCheckout (listing prices or agreed quotes, the
 * bulk threshold, freight to the shipping country), with a new expiry. Only the buyer the session is bound to
 * changes it; it fails once completion started, or when the session was canceled or expired.
 */
export const updateCheckout = async (
  deps: OrderDependencies,
  input: UpdateCheckoutInput,
): Promise<CheckoutSession> => {
  if (!isCheckoutId(input.checkoutId)) throw invalidCheckoutId();
  const idempotent = idempotentRequestOf(input.idempotencyKey, {
    path: 'idempotency_key',
    scope: idempotencyScopeOf({ accountId: input.buyerAccountId }),
    operation: 'UpdateCheckout',
    request: {
      checkoutId: input.checkoutId,
      buyerAccountId: input.buyerAccountId,
      lines: input.lines,
      buyer: input.buyer,
      shippingCountry: input.shippingCountry,
    },
  });
  return deps.idempotencyKeys.createOnce(idempotent, {
    create: async (recordKey) => {
      const current = await currentSession(deps, input.checkoutId);
      if (current?.buyerAccountId !== input.buyerAccountId) {
        throw notFound(`no checkout session ${input.checkoutId}`);
      }
      const request: CreateCheckoutInput = {
        ...input,
        lines:
          input.lines ??
          current.lines.map(({ productId, quantity, quoteRequestId }) => ({
            productId,
            quantity,
            quoteRequestId,
          })),
        buyer: input.buyer ?? current.buyer,
        buyerAccountId: input.buyerAccountId,
        shippingCountry: input.shippingCountry ?? current.shippingCountry,
      };
      validateInput(request);
      const toPrice = await linesToPrice(deps, request);
      const priced = priceCheckout(deps.bulkThreshold, toPrice);
      const session = sessionOfPricing(deps, input.checkoutId, request, toPrice, priced);
      const command = {
        type: 'UpdateCheckout',
        data: { buyerAccountId: input.buyerAccountId, session },
      } as const;
      const updated = await deps.db.transaction(async (tx) => {
        await recordKey?.(tx, input.checkoutId);
        return runCheckoutCommand(deps, input, input.checkoutId, command, { tx });
      });
      return updated.session;
    },
    replay: (checkoutId) => ownSession(deps, checkoutId, input.buyerAccountId),
  });
};

/**
 * Cancels the buyer's own open session; canceling a canceled session answers it unchanged. A session that is
 * completing or completed is a conflict: its orders are cancelled one by one (CancelOrder).
 */
export const cancelCheckout = async (
  deps: OrderDependencies,
  input: CommandContext & {
    readonly checkoutId: string;
    readonly buyerAccountId: number;
    readonly idempotencyKey?: string | undefined;
  },
): Promise<CheckoutSession> => {
  if (!isCheckoutId(input.checkoutId)) throw invalidCheckoutId();
  const idempotent = idempotentRequestOf(input.idempotencyKey, {
    path: 'idempotency_key',
    scope: idempotencyScopeOf({ accountId: input.buyerAccountId }),
    operation: 'CancelCheckout',
    request: { checkoutId: input.checkoutId, buyerAccountId: input.buyerAccountId },
  });
  return deps.idempotencyKeys.createOnce(idempotent, {
    create: async (recordKey) => {
      const canceled = await deps.db.transaction(async (tx) => {
        await recordKey?.(tx, input.checkoutId);
        return runCheckoutCommand(
          deps,
          input,
          input.checkoutId,
          { type: 'CancelCheckout', data: { buyerAccountId: input.buyerAccountId } },
          { tx },
        );
      });
      return canceled.session;
    },
    replay: (checkoutId) => ownSession(deps, checkoutId, input.buyerAccountId),
  });
};

const ownSession = async (
  deps: OrderDependencies,
  checkoutId: string,
  buyerAccountId: number,
): Promise<CheckoutSession> => {
  const session = await currentSession(deps, checkoutId);
  if (session?.buyerAccountId !== buyerAccountId) throw notFound(`no checkout session ${checkoutId}`);
  return session;
};

/**
 * The buyer's own session as it is now, with its orders once completed. Only the buyer the session is bound to
 * reads it (services/order/README.md, "Sessions"): everyone else, and everyone for a session priced anonymously
 * and not completed yet (nobody can show it is theirs), gets the same NOT_FOUND as for an unknown id.
 */
export const getCheckout = async (
  deps: OrderDependencies,
  checkoutId: string,
  buyerAccountId: number,
): Promise<CompletedCheckout> => {
  if (!isCheckoutId(checkoutId)) throw invalidCheckoutId();
  const session = await currentSession(deps, checkoutId);
  if (session?.buyerAccountId !== buyerAccountId) throw notFound(`no checkout session ${checkoutId}`);
  return { session, orders: await ordersOf(deps, session) };
};

/**
 * The recovery job: attempts that started more than `staleAfterMs` ago and neither placed their orders nor
 * failed (a crash, the database or the listing service down in between) are run again to their end. They roll
 * forward: the buyer asked to buy and the units may be held.
 */
export const recoverInterruptedCompletions = async (
  deps: OrderDependencies,
  staleAfterMs: number,
): Promise<number> => {
  const checkoutIds = await deps.completions.startedBefore(deps.db, deps.clock.now() - staleAfterMs, 50);
  let recovered = 0;
  for (const checkoutId of checkoutIds) {
    const session = await currentSession(deps, checkoutId);
    if (session?.status !== 'completing') {
      await deps.db.transaction((tx) => deps.completions.ended(tx, checkoutId));
      continue;
    }
    try {
      await finishAttempt(deps, { actor: { kind: 'system', id: 'checkout-recovery' } }, session);
      recovered++;
    } catch (error) {
      // A failed attempt is recorded as such by finishAttempt; anything else waits for the next pass.
      if (!isAppError(error) || error.kind !== 'conflict') throw error;
    }
  }
  return recovered;
};

/**
 * quick_buy: a one-line checkout of an instant-checkout listing under the threshold, or of the buyer's agreed
 * quote (accept_quote_and_pay), completed at once. Its
 * idempotency key is recorded with the session, so a repeat completes that same session: it answers the order
 * placed, or finishes a completion that was interrupted (a new attempt if the first one failed for stock).
 */
export const quickBuy = async (
  deps: OrderDependencies,
  input: CommandContext & {
    readonly productId: string;
    readonly quantity: number;
    readonly buyer: BuyerContact;
    readonly buyerAccountId: number;
    readonly shippingCountry?: string | undefined;
    readonly idempotencyKey?: string | undefined;
    readonly quoteRequestId?: number | undefined;
  },
): Promise<{ checkoutId: string; order: Order }> => {
  const session = await createCheckout(
    deps,
    {
      ...input,
      lines: [{ productId: input.productId, quantity: input.quantity, quoteRequestId: input.quoteRequestId }],
    },
    { instantOnly: true },
  );
  // The key is quick_buy's, recorded with the session: the completion takes none of its own.
  const { orders } = await completeCheckout(deps, {
    ...input,
    idempotencyKey: undefined,
    checkoutId: session.checkoutId,
    buyerAccountId: input.buyerAccountId,
  });
  const order = orders[0];
  if (!order) throw new Error(`quick_buy checkout ${session.checkoutId} placed no order`);
  return { checkoutId: session.checkoutId, order };
};
