import type { CommandContext } from '@marketplace/eventsourcing';
import type { Transaction } from '@marketplace/database';
import { handleCommand } from '@marketplace/eventsourcing';
import { isAppError, notFound, validationError } from '@marketplace/platform';
import type { DisputeNotice } from '../domain/order.emails.js';
import { disputeNoticeEmail } from '../domain/order.emails.js';
import type { OrderCommand } from '../domain/order.commands.js';
import { orderDecider, validateTracking } from '../domain/order.decider.js';
import type { DisputeReason, Order, RequestedAction, Tracking } from '../domain/order.events.js';
import { ORDER_LIMITS, streamIdOfOrder } from '../domain/order.rules.js';
import type { OrderDependencies } from './order.dependencies.js';
import { ORDER_STREAM_TYPE } from './order.dependencies.js';

const HOUR_MS = 60 * 60 * 1_000;

/**
 * Runs a command on an order the caller may touch (`owns`): others' orders, like missing ones, are not found,
 * so an id reveals nothing. The order's row is written in the transaction of its events.
 */
export const updateOrder = async (
  deps: OrderDependencies,
  context: CommandContext,
  orderId: number,
  owns: (order: Order) => boolean,
  command: Omit<OrderCommand, 'metadata'>,
  afterAppend?: (order: Order, tx: Transaction) => Promise<void>,
): Promise<Order> => {
  const found = await deps.orders.get(deps.db, orderId);
  if (!found || !owns(found.order)) throw notFound(`no order ${orderId}`);
  return deps.db.transaction(async (tx) => {
    const { state, events, version } = await handleCommand({
      store: deps.store,
      decider: orderDecider,
      streamId: streamIdOfOrder(orderId),
      streamType: ORDER_STREAM_TYPE,
      tx,
      // A transition decided on a state another writer just moved is decided again on the new state.
      retryOnConflict: 3,
      command: {
        ...command,
        metadata: {
          now: deps.clock.now(),
          actor: context.actor,
          correlationId: context.correlationId,
          traceparent: context.traceparent,
        },
      } as OrderCommand,
    });
    if (state.status !== 'placed') throw new Error(`order ${orderId} has no state after ${command.type}`);
    if (events.length > 0) {
      await deps.orders.save(tx, { order: state.order, version });
      await afterAppend?.(state.order, tx);
    }
    return state.order;
  });
};

export const ofBuyer = (buyerAccountId: number) => (order: Order) => order.buyerAccountId === buyerAccountId;
export const ofSeller = (sellerAccountId: number) => (order: Order) =>
  order.sellerAccountId === sellerAccountId;

export const getBuyerOrder = async (
  deps: OrderDependencies,
  orderId: number,
  buyerAccountId: number,
): Promise<Order> => {
  const found = await deps.orders.get(deps.db, orderId);
  if (!found || found.order.buyerAccountId !== buyerAccountId) throw notFound(`no order ${orderId}`);
  return found.order;
};

export const confirmOrder = (
  deps: OrderDependencies,
  input: CommandContext & { readonly orderId: number; readonly buyerAccountId: number },
): Promise<Order> =>
  updateOrder(deps, input, input.orderId, ofBuyer(input.buyerAccountId), { type: 'ConfirmOrder', data: {} });

export const openDispute = async (
  deps: OrderDependencies,
  input: CommandContext & {
    readonly orderId: number;
    readonly buyerAccountId: number;
    readonly reason: DisputeReason;
    readonly description: string;
    readonly requestedAction?: RequestedAction | undefined;
    readonly photoUrls: readonly string[];
  },
): Promise<Order> => {
  const order = await updateOrder(
    deps,
    input,
    input.orderId,
    ofBuyer(input.buyerAccountId),
    {
      type: 'OpenDispute',
      data: {
        reason: input.reason,
        description: input.description,
        requestedAction: input.requestedAction,
        photoUrls: input.photoUrls,
      },
    },
    async (disputed, tx) => {
      const { issue } = disputed;
      if (!issue) throw new Error(`order ${disputed.orderId} disputed without an issue`);
      const notice: DisputeNotice = {
        orderId: disputed.orderId,
        productId: disputed.productId,
        productName: disputed.productName,
        quantity: disputed.quantity,
        totalCents: disputed.totalCents,
        currency: disputed.currency,
        sellerAccountId: disputed.sellerAccountId,
        buyerAccountId: disputed.buyerAccountId,
        buyerEmail: disputed.buyer.email,
        reason: issue.reason,
        description: issue.description,
        requestedAction: issue.requestedAction,
        photoUrls: issue.photoUrls,
        reportedAt: issue.reportedAt,
      };
      await deps.disputes.record(tx, notice, issue.reportedAt);
      await queueDisputeMails(deps, tx);
    },
  );
  deps.onDisputeRecorded();
  return order;
};

export const markDelivered = (
  deps: OrderDependencies,
  input: CommandContext & { readonly orderId: number; readonly sellerAccountId: number },
): Promise<Order> =>
  updateOrder(deps, input, input.orderId, ofSeller(input.sellerAccountId), {
    type: 'MarkDelivered',
    data: {},
  });

export type SkipReason = 'not_found' | 'already_shipped' | 'not_shippable';

export interface MarkShippedResult {
  readonly updated: Order[];
  readonly skipped: { readonly orderId: number; readonly reason: SkipReason; readonly message: string }[];
}

/**
 * bulk_mark_shipped: each of the seller's orders awaiting shipment is shipped with the tracking; an order already
 * shipped with the same tracking counts as updated (repeating the call changes nothing); every other id is
 * skipped with its reason. Unknown ids and other sellers' orders share one reason, `not_found`.
 */
export const markShipped = async (
  deps: OrderDependencies,
  input: CommandContext & {
    readonly sellerAccountId: number;
    readonly orderIds: readonly number[];
    readonly tracking: Tracking;
  },
): Promise<MarkShippedResult> => {
  const orderIds = [...new Set(input.orderIds)];
  if (orderIds.length < 1 || orderIds.length > ORDER_LIMITS.bulkMaxOrderIds) {
    throw validationError('invalid order ids', [
      { path: 'order_ids', message: `must have 1 to ${ORDER_LIMITS.bulkMaxOrderIds} items` },
    ]);
  }
  validateTracking(input.tracking);
  const owned = new Set(
    (await deps.orders.ofSeller(deps.db, input.sellerAccountId, orderIds)).map(({ order }) => order.orderId),
  );
  const result: MarkShippedResult = { updated: [], skipped: [] };
  for (const orderId of orderIds) {
    if (!owned.has(orderId)) {
      result.skipped.push({ orderId, reason: 'not_found', message: `no order ${orderId} of this seller` });
      continue;
    }
    try {
      result.updated.push(
        await updateOrder(deps, input, orderId, ofSeller(input.sellerAccountId), {
          type: 'MarkShipped',
          data: { tracking: input.tracking },
        }),
      );
    } catch (error) {
      if (!isAppError(error) || error.kind !== 'conflict') throw error;
      const current = await deps.orders.get(deps.db, orderId);
      const shippedAlready = current?.order.shippedAt !== undefined;
      result.skipped.push({
        orderId,
        reason: shippedAlready ? 'already_shipped' : 'not_shippable',
        message: error.message,
      });
    }
  }
  return result;
};

/** The seller's orders among the ids, in the order asked; others' and unknown ids are left out. */
export const getSellerOrders = async (
  deps: OrderDependencies,
  sellerAccountId: number,
  orderIds: readonly number[],
): Promise<Order[]> => {
  const byId = new Map(
    (await deps.orders.ofSeller(deps.db, sellerAccountId, [...new Set(orderIds)])).map(({ order }) => [
      order.orderId,
      order,
    ]),
  );
  return [...new Set(orderIds)].flatMap((orderId) => byId.get(orderId) ?? []);
};

export const sellerAttention = async (
  deps: OrderDependencies,
  input: { readonly sellerAccountId: number; readonly windowHours: number; readonly limit: number },
) => {
  const violations = [
    ...(Number.isInteger(input.windowHours) && input.windowHours >= 1 && input.windowHours <= 168
      ? []
      : [{ path: 'window_hours', message: 'must be a whole number from 1 to 168' }]),
    ...(Number.isInteger(input.limit) && input.limit >= 1 && input.limit <= 50
      ? []
      : [{ path: 'limit', message: 'must be a whole number from 1 to 50' }]),
  ];
  if (violations.length > 0) throw validationError('invalid inbox request', violations);
  const now = deps.clock.now();
  const deadlineBefore = now + input.windowHours * HOUR_MS;
  const [atRisk, issues, newOrders] = await Promise.all([
    deps.orders.atRisk(deps.db, input.sellerAccountId, deadlineBefore, input.limit),
    deps.orders.issuesReported(deps.db, input.sellerAccountId, input.limit),
    // An order placed seconds ago counts although its ship-by deadline is days away.
    deps.orders.placedSince(deps.db, input.sellerAccountId, now - input.windowHours * HOUR_MS, input.limit),
  ]);
  return { atRisk, issues, newOrders };
};

/**
 * The automatic completion (docs/specification.md, "Checkout and orders"): delivered orders whose inspection deadline passed
 * without a dispute are completed. Safe on every replica at once: a second completion decides nothing.
 */
export const completeInspectedOrders = async (deps: OrderDependencies): Promise<number> => {
  const due = await deps.orders.dueForCompletion(deps.db, deps.clock.now(), 100);
  let completed = 0;
  for (const orderId of due) {
    const order = await updateOrder(
      deps,
      { actor: { kind: 'system', id: 'inspection-deadline' } },
      orderId,
      () => true,
      {
        type: 'CompleteAfterInspection',
        data: {},
      },
    );
    if (order.status === 'completed') completed++;
  }
  return completed;
};

/** Notices turned into emails per transaction (the backlog of a start with `ADMIN_EMAIL` newly set). */
const DISPUTE_MAILS_PER_TRANSACTION = 100;

/**
 * Queues the operator's email for every dispute notice not queued yet, in the caller's transaction (the dispute's
 * own, or the start-up pass for notices recorded while `ADMIN_EMAIL` was unset); the outgoing-mail worker sends
 * them after the commit, so no transaction waits on the mail server (`docs/architecture.md`, "Outgoing mail").
 * Without `ADMIN_EMAIL` the notices wait. Resolves to the number queued.
 */
export const queueDisputeMails = async (deps: OrderDependencies, tx: Transaction): Promise<number> => {
  if (deps.disputeMailTo === undefined) return 0;
  const to = deps.disputeMailTo;
  const notices = await deps.disputes.unqueued(tx, DISPUTE_MAILS_PER_TRANSACTION);
  if (notices.length === 0) return 0;
  const now = deps.clock.now();
  await deps.outgoingMail.enqueue(
    tx,
    notices.map((notice) => disputeNoticeEmail(notice, to)),
    now,
  );
  await deps.disputes.markQueued(
    tx,
    notices.map((notice) => notice.orderId),
    now,
  );
  return notices.length;
};

export const countOrdersSince = (deps: OrderDependencies, sinceMs: number): Promise<number> =>
  deps.orders.countPlacedSince(deps.db, sinceMs);
