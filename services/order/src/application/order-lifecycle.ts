import type { Transaction } from '@marketplace/database';
import { retryDelayAfter } from '@marketplace/outgoing-mail';
import type { QueuedMail } from '@marketplace/outgoing-mail';
import type { CommandContext } from '@marketplace/eventsourcing';
import { toIso, validationError } from '@marketplace/platform';
import type { CancelledBy, DisputeResolution, Order, OrderStatus } from '../domain/order.events.js';
import { ORDER_STATUSES } from '../domain/order.events.js';
import type { OrderDependencies } from './order.dependencies.js';
import type { Party } from '../domain/order.emails.js';
import { mailTo, orderLine } from '../domain/order.emails.js';
import { ofBuyer, ofSeller, updateOrder } from './orders.js';

/** Lists answer 1 to 100 orders a page (docs/specification.md, "Order lifecycle"). */
export const ORDER_PAGE_MAX = 100;

export interface OrderPage {
  readonly orders: Order[];
  /** The last order id of this page, when another page follows. */
  readonly nextCursor: string | undefined;
}

const pageOf = (limit: number, cursor: string) => {
  const violations = [
    ...(Number.isInteger(limit) && limit >= 1 && limit <= ORDER_PAGE_MAX
      ? []
      : [{ path: 'limit', message: `must be a whole number from 1 to ${ORDER_PAGE_MAX}` }]),
    ...(cursor === '' || /^[1-9][0-9]{0,15}$/.test(cursor)
      ? []
      : [{ path: 'cursor', message: 'must be the next_cursor of a previous page' }]),
  ];
  if (violations.length > 0) throw validationError('invalid page', violations);
  return { limit, beforeOrderId: cursor === '' ? undefined : Number(cursor) };
};

const statusesOf = (status: string): OrderStatus[] | undefined => {
  if (status === '') return undefined;
  const known = ORDER_STATUSES.find((candidate) => candidate === status);
  if (!known) {
    throw validationError('invalid status', [
      { path: 'status', message: `must be one of ${ORDER_STATUSES.join(', ')}` },
    ]);
  }
  return [known];
};

const listed = async (
  deps: OrderDependencies,
  filter: Parameters<OrderDependencies['orders']['list']>[1],
  page: { limit: number; cursor: string },
): Promise<OrderPage> => {
  const { orders, nextBeforeOrderId } = await deps.orders.list(
    deps.db,
    filter,
    pageOf(page.limit, page.cursor),
  );
  return { orders, nextCursor: nextBeforeOrderId === undefined ? undefined : String(nextBeforeOrderId) };
};

/** The buyer's own orders, newest first; nobody else's ever appear. */
export const listBuyerOrders = async (
  deps: OrderDependencies,
  input: { buyerAccountId: number; status: string; limit: number; cursor: string },
): Promise<OrderPage> =>
  listed(deps, { buyerAccountId: input.buyerAccountId, statuses: statusesOf(input.status) }, input);

/** The seller's own orders, newest first. */
export const listSellerOrders = async (
  deps: OrderDependencies,
  input: { sellerAccountId: number; status: string; limit: number; cursor: string },
): Promise<OrderPage> =>
  listed(deps, { sellerAccountId: input.sellerAccountId, statuses: statusesOf(input.status) }, input);

export const DISPUTE_FILTERS = ['open', 'resolved', 'all'] as const;

/** The operator's view of disputed orders: open (issue_reported), resolved, or all; newest first. */
export const listDisputes = async (
  deps: OrderDependencies,
  input: { status: string; limit: number; cursor: string },
): Promise<OrderPage> => {
  const filter = input.status === '' ? 'open' : input.status;
  if (!DISPUTE_FILTERS.some((known) => known === filter)) {
    throw validationError('invalid status', [
      { path: 'status', message: `must be one of ${DISPUTE_FILTERS.join(', ')}` },
    ]);
  }
  const statuses = filter === 'open' ? ['issue_reported'] : filter === 'resolved' ? ['resolved'] : undefined;
  return listed(deps, { disputed: true, statuses }, input);
};

/** The buyer's address from the order; the seller's from the account events (`seller_contacts`). */
const partiesOf = async (deps: OrderDependencies, tx: Transaction, order: Order): Promise<Party[]> => {
  const seller = await deps.sellerContacts.find(tx, order.sellerAccountId);
  if (!seller) {
    deps.logger.warn(
      { orderId: order.orderId, sellerAccountId: order.sellerAccountId },
      'no email address known for the seller: its notice is not sent',
    );
  }
  return [
    { to: order.buyer.email, role: 'buyer' },
    ...(seller ? [{ to: seller.email, role: 'seller' as const }] : []),
  ];
};

const queueMail = async (deps: OrderDependencies, tx: Transaction, mail: QueuedMail[]): Promise<void> => {
  if (mail.length === 0) return;
  await deps.outgoingMail.enqueue(tx, mail, deps.clock.now());
  deps.db.afterCommit(deps.onMailQueued);
};

/**
 * Cancels an order awaiting shipment (docs/specification.md, "Order lifecycle"): its buyer, or its seller who
 * cannot fulfil it. In the cancellation's transaction: the stock release to do and both parties' emails; both
 * happen after the commit. Someone else's order is not found; a repeat answers the cancelled order unchanged.
 */
export const cancelOrder = (
  deps: OrderDependencies,
  input: CommandContext & {
    readonly orderId: number;
    readonly by: CancelledBy;
    readonly accountId: number;
    readonly reason?: string | undefined;
  },
): Promise<Order> =>
  updateOrder(
    deps,
    input,
    input.orderId,
    input.by === 'buyer' ? ofBuyer(input.accountId) : ofSeller(input.accountId),
    { type: 'CancelOrder', data: { by: input.by, reason: input.reason } },
    async (order, tx) => {
      const now = deps.clock.now();
      await deps.stockReleases.record(
        tx,
        { orderId: order.orderId, productId: order.productId, reservationId: order.reservationId },
        now,
      );
      deps.db.afterCommit(deps.onStockReleaseQueued);
      const who = input.by === 'buyer' ? 'the buyer' : 'the seller, who cannot fulfil it';
      const reason = order.cancellation?.reason;
      const parties = await partiesOf(deps, tx, order);
      await queueMail(
        deps,
        tx,
        parties.map((party) =>
          mailTo(party, 'cancelled', order, `Order ${order.orderId} cancelled`, [
            orderLine(order),
            `Cancelled by ${who} at ${toIso(now)}.`,
            ...(reason ? [`Reason: ${reason}`] : []),
            party.role === 'seller'
              ? 'Do not ship it. The reserved units are back in stock.'
              : 'Nothing is owed for this order.',
          ]),
        ),
      );
    },
  );

const RESOLUTION_TEXT: Record<DisputeResolution, string> = {
  refunded: 'refunded in full',
  partially_refunded: 'partially refunded',
  replaced: 'to be replaced by the seller',
  rejected: 'rejected: the order stands as delivered',
};

/** The operator's decision on a disputed order (docs/specification.md, "Disputes"); both parties are emailed. */
export const resolveDispute = (
  deps: OrderDependencies,
  input: CommandContext & {
    readonly orderId: number;
    readonly resolution: DisputeResolution;
    readonly refundCents?: number | undefined;
    readonly note: string;
  },
): Promise<Order> =>
  updateOrder(
    deps,
    input,
    input.orderId,
    () => true,
    {
      type: 'ResolveDispute',
      data: { resolution: input.resolution, refundCents: input.refundCents, note: input.note },
    },
    async (order, tx) => {
      const { resolution } = order;
      if (!resolution) throw new Error(`order ${order.orderId} resolved without a resolution`);
      const parties = await partiesOf(deps, tx, order);
      await queueMail(
        deps,
        tx,
        parties.map((party) =>
          mailTo(
            party,
            'resolved',
            order,
            `Dispute on order ${order.orderId} resolved: ${resolution.resolution}`,
            [
              orderLine(order),
              `The dispute is ${RESOLUTION_TEXT[resolution.resolution]}.`,
              ...(resolution.refundCents > 0
                ? [`Refund: ${resolution.refundCents} ${order.currency} cents.`]
                : []),
              '',
              `Note from the marketplace: ${resolution.note}`,
            ],
          ),
        ),
      );
    },
  );

/** Waits after the 1st, 2nd, ... failed release; the last repeats. */
export const STOCK_RELEASE_RETRY_DELAYS_MS: readonly number[] = [
  1_000,
  5_000,
  30_000,
  2 * 60_000,
  10 * 60_000,
];
const STOCK_RELEASE_LEASE_MS = 30_000;

/**
 * Puts back the stock of cancelled orders: claims due releases (committed before any call), calls the listing
 * service's ReleaseStock with no transaction open (idempotent per reservation id, so a repeat after a crash
 * releases nothing twice), and records each outcome. Resolves to the number released.
 */
export const releaseCancelledStock = async (deps: OrderDependencies, limit = 50): Promise<number> => {
  const claimed = await deps.stockReleases.claimDue(deps.db, deps.clock.now(), limit, STOCK_RELEASE_LEASE_MS);
  let released = 0;
  for (const release of claimed) {
    try {
      await deps.listings.release(release.productId, release.reservationId);
      await deps.stockReleases.markReleased(deps.db, release.orderId, deps.clock.now());
      released++;
    } catch (error) {
      const retryAt = deps.clock.now() + retryDelayAfter(release.attempts, STOCK_RELEASE_RETRY_DELAYS_MS);
      deps.logger.warn({ err: error, orderId: release.orderId }, 'stock release failed; retrying later');
      await deps.stockReleases.retryLater(deps.db, release.orderId, String(error), retryAt);
    }
  }
  return released;
};

/** What the seller's order notice needs to say (from the order topic's OrderPlaced and IssueReported). */
export interface SellerNotice {
  readonly kind: 'placed' | 'disputed';
  readonly orderId: number;
}

/**
 * The seller's email about a new or disputed order (docs/specification.md, "Seller notifications"), queued by the
 * consumer of the order topic in its transaction: the order's row says what to tell. Without the seller's address
 * (its account event not seen yet) nothing is queued and a warning is logged. Resolves to the number queued.
 */
export const queueSellerNotice = async (
  deps: OrderDependencies,
  tx: Transaction,
  notice: SellerNotice,
): Promise<number> => {
  const found = await deps.orders.get(tx, notice.orderId);
  if (!found) return 0;
  const { order } = found;
  const seller = await deps.sellerContacts.find(tx, order.sellerAccountId);
  if (!seller) {
    deps.logger.warn(
      { orderId: order.orderId, sellerAccountId: order.sellerAccountId },
      'no email address known for the seller: its order notice is not sent',
    );
    return 0;
  }
  const party: Party = { to: seller.email, role: 'seller' };
  const mail =
    notice.kind === 'placed'
      ? mailTo(
          party,
          'placed',
          order,
          `New order ${order.orderId}: ${order.quantity} x ${order.productName}`,
          [
            orderLine(order),
            `Placed at ${toIso(order.placedAt)} on invoice terms (net 30).`,
            `Ship by ${toIso(order.shipBy)}.`,
            ...(order.shippingCountry ? [`Ship to: ${order.shippingCountry}`] : []),
          ],
        )
      : mailTo(party, 'disputed', order, `Dispute on order ${order.orderId}: ${order.issue?.reason ?? ''}`, [
          orderLine(order),
          `The buyer reported: ${order.issue?.reason ?? ''}`,
          `Requested action: ${order.issue?.requestedAction ?? 'none given'}`,
          '',
          order.issue?.description ?? '',
          '',
          'The marketplace operator will resolve it and tell you the outcome.',
        ]);
  await queueMail(deps, tx, [mail]);
  return 1;
};
