import { describe, expect, it } from '@jest/globals';
import { DeciderSpecification } from '@marketplace/eventsourcing';
import { AppError } from '@marketplace/platform';
import type {
  ClaimQuote,
  QuoteRequestDraft,
  QuoteResponseDraft,
  RequestQuote,
  RespondToQuote,
} from '../src/domain/quote.commands.js';
import { quoteDecider } from '../src/domain/quote.decider.js';
import type { QuoteRequest, QuoteRequested, QuoteResponded } from '../src/domain/quote.events.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const LATER = NOW + 3_600_000;
const SELLER = 7;
const spec = DeciderSpecification.for(quoteDecider);

const product = {
  productId: 'product_42',
  sellerAccountId: SELLER,
  name: 'Pallet of USB-C chargers',
  unitPriceCents: 1_250,
  currency: 'USD',
  availableQuantity: 480,
};

const requestQuote = (draft: Partial<QuoteRequestDraft> = {}, buyerAccountId?: number): RequestQuote => ({
  type: 'RequestQuote',
  data: {
    quoteRequestId: 5,
    product,
    buyerAccountId,
    draft: { quantity: 500, buyer: { email: 'buyer@example.test' }, ...draft },
  },
  metadata: { now: NOW, actor: { kind: 'anonymous', id: '' } },
});

const respond = (draft: QuoteResponseDraft, sellerAccountId = SELLER): RespondToQuote => ({
  type: 'RespondToQuote',
  data: { quoteRequestId: 5, sellerAccountId, draft },
  metadata: { now: LATER, actor: { kind: 'seller', id: String(sellerAccountId) } },
});

const pending = (quote: Partial<QuoteRequest> = {}): QuoteRequest => ({
  quoteRequestId: 5,
  product,
  quantity: 500,
  buyer: { email: 'buyer@example.test' },
  buyerAccountId: undefined,
  targetPriceCents: undefined,
  message: undefined,
  status: 'pending',
  exceedsAvailableStock: true,
  createdAt: NOW,
  updatedAt: NOW,
  ...quote,
});

const requested = (quote: Partial<QuoteRequest> = {}): QuoteRequested => ({
  type: 'QuoteRequested',
  data: { quoteRequest: pending(quote) },
});

const responded = (
  quote: QuoteRequest,
  response: Pick<NonNullable<QuoteRequest['response']>, 'action' | 'counterPriceCents' | 'message'>,
  agreedUnitPriceCents: number | undefined,
): QuoteResponded => ({
  type: 'QuoteResponded',
  data: {
    quoteRequest: {
      ...quote,
      status: 'responded',
      response: { ...response, respondedAt: LATER, respondedByAccountId: SELLER },
      agreedUnitPriceCents,
      offerExpiresAt: agreedUnitPriceCents === undefined ? undefined : LATER + 7 * 24 * 3_600_000,
      updatedAt: LATER,
    },
  },
});

const isKind =
  (kind: AppError['kind'], pattern?: RegExp) =>
  (error: unknown): boolean =>
    error instanceof AppError &&
    error.kind === kind &&
    (pattern === undefined || pattern.test(error.message));

describe('quote decider: RequestQuote', () => {
  it('files a pending request, above the stock on purpose', () => {
    spec.given([]).when(requestQuote()).then([requested()]);
  });

  it('keeps the buyer account, target price, trimmed texts, and flags a quantity within stock as not exceeding', () => {
    spec
      .given([])
      .when(
        requestQuote(
          {
            quantity: 480,
            buyer: { email: 'buyer@example.test', name: ' Ada ', company: '' },
            targetPriceCents: 1_000,
            message: ' by Friday ',
          },
          21,
        ),
      )
      .then([
        requested({
          quantity: 480,
          buyer: { email: 'buyer@example.test', name: 'Ada', company: undefined },
          buyerAccountId: 21,
          targetPriceCents: 1_000,
          message: 'by Friday',
          exceedsAvailableStock: false,
        }),
      ]);
  });

  it('refuses every invalid field at once, on the REST paths', () => {
    spec
      .given([])
      .when(requestQuote({ quantity: 0, buyer: { email: 'not-an-email' }, targetPriceCents: 12.5 }))
      .thenThrows((error) => {
        if (!(error instanceof AppError) || error.kind !== 'validation') return false;
        expect(error.violations.map(({ path }) => path).sort()).toEqual([
          'buyer/email',
          'quantity',
          'target_price',
        ]);
        return true;
      });
  });

  it('refuses a second RequestQuote on the same id', () => {
    spec.given([requested()]).when(requestQuote()).thenThrows(isKind('conflict'));
  });
});

describe('quote decider: RespondToQuote', () => {
  it('accept agrees on the target price when the buyer gave one', () => {
    const quote = pending({ targetPriceCents: 1_000 });
    spec
      .given([requested({ targetPriceCents: 1_000 })])
      .when(respond({ action: 'accept', message: 'deal' }))
      .then([responded(quote, { action: 'accept', counterPriceCents: undefined, message: 'deal' }, 1_000)]);
  });

  it('accept without a target price agrees on the listed price', () => {
    spec
      .given([requested()])
      .when(respond({ action: 'accept' }))
      .then([
        responded(pending(), { action: 'accept', counterPriceCents: undefined, message: undefined }, 1_250),
      ]);
  });

  it('counter agrees on the counter price', () => {
    spec
      .given([requested()])
      .when(respond({ action: 'counter', counterPriceCents: 1_100 }))
      .then([
        responded(pending(), { action: 'counter', counterPriceCents: 1_100, message: undefined }, 1_100),
      ]);
  });

  it('decline agrees on no price', () => {
    spec
      .given([requested()])
      .when(respond({ action: 'decline', message: 'sold elsewhere' }))
      .then([
        responded(
          pending(),
          { action: 'decline', counterPriceCents: undefined, message: 'sold elsewhere' },
          undefined,
        ),
      ]);
  });

  it('counter needs a counter price; accept and decline refuse one', () => {
    const onCounterPrice = (message: RegExp) => (error: unknown) =>
      error instanceof AppError &&
      error.kind === 'validation' &&
      error.violations.some(
        (violation) => violation.path === 'counter_price' && message.test(violation.message),
      );
    spec
      .given([requested()])
      .when(respond({ action: 'counter' }))
      .thenThrows(onCounterPrice(/required/));
    spec
      .given([requested()])
      .when(respond({ action: 'decline', counterPriceCents: 900 }))
      .thenThrows(onCounterPrice(/only for counter/));
  });

  it('refuses an unknown action', () => {
    spec
      .given([requested()])
      .when(respond({ action: 'haggle' }))
      .thenThrows(isKind('validation', /action/));
  });

  it('responding twice is a conflict that names the first answer', () => {
    const first = responded(
      pending(),
      { action: 'decline', counterPriceCents: undefined, message: undefined },
      undefined,
    );
    spec
      .given([requested(), first])
      .when(respond({ action: 'accept' }))
      .thenThrows(isKind('conflict', /already answered \(decline/));
  });

  it("another seller's request is not found, like a missing one", () => {
    spec
      .given([requested()])
      .when(respond({ action: 'accept' }, 8))
      .thenThrows(isKind('not_found'));
    spec
      .given([])
      .when(respond({ action: 'accept' }))
      .thenThrows(isKind('not_found'));
  });
});

describe('quote decider: ClaimQuote', () => {
  const BUYER = 41;
  const claim = (claimTokenMatches: boolean, buyerAccountId = BUYER): ClaimQuote => ({
    type: 'ClaimQuote',
    data: { quoteRequestId: 5, buyerAccountId, claimTokenMatches },
    metadata: { now: LATER, actor: { kind: 'buyer', id: String(buyerAccountId) } },
  });

  it('gives an anonymous request to the account holding its claim token', () => {
    spec
      .given([requested()])
      .when(claim(true))
      .then([
        {
          type: 'QuoteClaimed',
          data: { quoteRequest: pending({ buyerAccountId: BUYER, claimedAt: LATER, updatedAt: LATER }) },
        },
      ]);
  });

  it('reads a wrong token like an unknown request', () => {
    spec.given([requested()]).when(claim(false)).thenThrows(isKind('not_found'));
    spec.given([]).when(claim(true)).thenThrows(isKind('not_found'));
  });

  it("changes nothing when claimed again by its owner, and refuses another account's request", () => {
    const claimed: QuoteRequested = requested({ buyerAccountId: BUYER, claimedAt: NOW });
    spec.given([claimed]).when(claim(true)).then([]);
    spec
      .given([claimed])
      .when(claim(true, 99))
      .thenThrows(isKind('conflict', /another buyer account/));
    spec
      .given([requested({ buyerAccountId: 99 })])
      .when(claim(true))
      .thenThrows(isKind('conflict'));
  });
});
