import { describe, expect, it } from '@jest/globals';
import { DeciderSpecification } from '@marketplace/eventsourcing';
import { AppError } from '@marketplace/platform';
import type {
  ClaimQuote,
  QuoteRequestDraft,
  QuoteResponseDraft,
  RequestQuote,
  RespondToCounterOffer,
  RespondToQuote,
} from '../src/domain/quote.commands.js';
import { negotiationStateOf, quoteDecider } from '../src/domain/quote.decider.js';
import type {
  QuoteBuyerResponded,
  QuoteRequest,
  QuoteRequested,
  QuoteResponded,
} from '../src/domain/quote.events.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const LATER = NOW + 3_600_000;
const WEEK = 7 * 24 * 3_600_000;
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
      offerExpiresAt: agreedUnitPriceCents === undefined ? undefined : LATER + WEEK,
      history: [
        ...(quote.history ?? []),
        {
          party: 'seller',
          action: response.action,
          priceCents: agreedUnitPriceCents,
          message: response.message,
          at: LATER,
          expiresAt: response.action === 'counter' ? LATER + WEEK : undefined,
          byAccountId: SELLER,
        },
      ],
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

  it('keeps the shipping destination the seller prices freight for (docs/specification.md, "Checkout and orders")', () => {
    spec
      .given([])
      .when(requestQuote({ shippingDestination: ' Chicago, IL 60601 ' }))
      .then([requested({ shippingDestination: 'Chicago, IL 60601' })]);
    spec
      .given([])
      .when(requestQuote({ shippingDestination: 'x'.repeat(301) }))
      .thenThrows((error) => {
        if (!(error instanceof AppError) || error.kind !== 'validation') return false;
        expect(error.violations.map(({ path }) => path)).toEqual(['shipping_destination']);
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

describe('quote decider: negotiation rounds', () => {
  const BUYER = 41;
  const ROUND_2 = LATER + 3_600_000;
  const ROUND_3 = ROUND_2 + 3_600_000;
  const opened = requested({ buyerAccountId: BUYER, targetPriceCents: 900 });
  const sellerCounter = responded(
    pending({ buyerAccountId: BUYER, targetPriceCents: 900 }),
    { action: 'counter', counterPriceCents: 1_100, message: undefined },
    1_100,
  );
  const afterSellerCounter = sellerCounter.data.quoteRequest;

  const buyerAnswers = (
    draft: QuoteResponseDraft,
    at = ROUND_2,
    buyerAccountId = BUYER,
  ): RespondToCounterOffer => ({
    type: 'RespondToCounterOffer',
    data: { quoteRequestId: 5, buyerAccountId, draft },
    metadata: { now: at, actor: { kind: 'buyer', id: String(buyerAccountId) } },
  });
  const sellerAnswers = (draft: QuoteResponseDraft, at = ROUND_3): RespondToQuote => ({
    ...respond(draft),
    metadata: { now: at, actor: { kind: 'seller', id: String(SELLER) } },
  });

  const buyerCountered: QuoteBuyerResponded = {
    type: 'QuoteBuyerResponded',
    data: {
      quoteRequest: {
        ...afterSellerCounter,
        status: 'pending',
        agreedUnitPriceCents: undefined,
        offerExpiresAt: ROUND_2 + WEEK,
        history: [
          ...(afterSellerCounter.history ?? []),
          {
            party: 'buyer',
            action: 'counter',
            priceCents: 1_000,
            message: 'meet me halfway',
            at: ROUND_2,
            expiresAt: ROUND_2 + WEEK,
            byAccountId: BUYER,
          },
        ],
        updatedAt: ROUND_2,
      },
    },
  };

  it("a seller counter is the buyer's turn; the buyer's accept agrees that price for a week", () => {
    expect(negotiationStateOf(afterSellerCounter)).toBe('awaiting_buyer');
    spec
      .given([opened, sellerCounter])
      .when(buyerAnswers({ action: 'accept' }))
      .then([
        {
          type: 'QuoteBuyerResponded',
          data: {
            quoteRequest: {
              ...afterSellerCounter,
              status: 'responded',
              agreedUnitPriceCents: 1_100,
              offerExpiresAt: ROUND_2 + WEEK,
              history: [
                ...(afterSellerCounter.history ?? []),
                {
                  party: 'buyer',
                  action: 'accept',
                  priceCents: 1_100,
                  message: undefined,
                  at: ROUND_2,
                  expiresAt: undefined,
                  byAccountId: BUYER,
                },
              ],
              updatedAt: ROUND_2,
            },
          },
        },
      ]);
  });

  it('a buyer counter hands the turn back to the seller (pending again) and leaves nothing to buy', () => {
    spec
      .given([opened, sellerCounter])
      .when(buyerAnswers({ action: 'counter', counterPriceCents: 1_000, message: ' meet me halfway ' }))
      .then([buyerCountered]);
    expect(negotiationStateOf(buyerCountered.data.quoteRequest)).toBe('awaiting_seller');
  });

  it("the seller's accept of a buyer counter agrees the buyer's price; the history holds every step", () => {
    spec
      .given([opened, sellerCounter, buyerCountered])
      .when(sellerAnswers({ action: 'accept' }))
      .then(
        [
          responded(
            buyerCountered.data.quoteRequest,
            { action: 'accept', counterPriceCents: undefined, message: undefined },
            1_000,
          ),
        ].map((event) => ({
          ...event,
          data: {
            quoteRequest: {
              ...event.data.quoteRequest,
              response: { ...event.data.quoteRequest.response!, respondedAt: ROUND_3 },
              offerExpiresAt: ROUND_3 + WEEK,
              history: event.data.quoteRequest.history!.map((step, index) =>
                index === 2 ? { ...step, at: ROUND_3 } : step,
              ),
              updatedAt: ROUND_3,
            },
          },
        })),
      );
  });

  it('the buyer may decline: nothing agreed, the negotiation is over for both sides', () => {
    const declined = quoteDecider.decide(buyerAnswers({ action: 'decline' }), {
      status: 'requested',
      quoteRequest: afterSellerCounter,
    });
    const after = declined[0]!.data.quoteRequest;
    expect(after).toMatchObject({
      status: 'responded',
      agreedUnitPriceCents: undefined,
      offerExpiresAt: undefined,
    });
    expect(negotiationStateOf(after)).toBe('declined');
    const closed = { type: 'QuoteBuyerResponded' as const, data: { quoteRequest: after } };
    spec
      .given([opened, sellerCounter, closed])
      .when(buyerAnswers({ action: 'accept' }, ROUND_3))
      .thenThrows(isKind('conflict', /was declined/));
    spec
      .given([opened, sellerCounter, closed])
      .when(sellerAnswers({ action: 'accept' }))
      .thenThrows(isKind('conflict', /already answered/));
  });

  it("another account's request is not found; an anonymous unclaimed one too", () => {
    spec
      .given([opened, sellerCounter])
      .when(buyerAnswers({ action: 'accept' }, ROUND_2, 99))
      .thenThrows(isKind('not_found'));
    spec
      .given([requested(), responded(pending(), { action: 'counter', counterPriceCents: 1_100 }, 1_100)])
      .when(buyerAnswers({ action: 'accept' }))
      .thenThrows(isKind('not_found'));
    spec
      .given([])
      .when(buyerAnswers({ action: 'accept' }))
      .thenThrows(isKind('not_found'));
  });

  it('refuses the buyer out of turn: before the seller answered, after a seller accept, after its own counter', () => {
    spec
      .given([opened])
      .when(buyerAnswers({ action: 'accept' }))
      .thenThrows(isKind('conflict', /waits for the seller/));
    spec
      .given([opened, responded(pending({ buyerAccountId: BUYER }), { action: 'accept' }, 900)])
      .when(buyerAnswers({ action: 'counter', counterPriceCents: 800 }))
      .thenThrows(isKind('conflict', /agreed price/));
    spec
      .given([opened, sellerCounter, buyerCountered])
      .when(buyerAnswers({ action: 'counter', counterPriceCents: 950 }, ROUND_3))
      .thenThrows(isKind('conflict', /waits for the seller/));
  });

  it('refuses an answer to an expired offer, on either side', () => {
    spec
      .given([opened, sellerCounter])
      .when(buyerAnswers({ action: 'accept' }, LATER + WEEK))
      .thenThrows(isKind('conflict', /expired/));
    spec
      .given([opened, sellerCounter, buyerCountered])
      .when(sellerAnswers({ action: 'accept' }, ROUND_2 + WEEK + 1))
      .thenThrows(isKind('conflict', /buyer's offer .* expired/));
  });

  it('checks the buyer answer like a seller answer: counter needs counter_price, and only counter', () => {
    spec
      .given([opened, sellerCounter])
      .when(buyerAnswers({ action: 'counter' }))
      .thenThrows(isKind('validation', /counter_price is required/));
    spec
      .given([opened, sellerCounter])
      .when(buyerAnswers({ action: 'accept', counterPriceCents: 5 }))
      .thenThrows(isKind('validation', /counter_price is only for counter/));
  });

  it('ends a negotiation that reached the step limit: accept or decline only', () => {
    const long: QuoteRequest = {
      ...afterSellerCounter,
      history: Array.from({ length: 20 }, (_, index) => ({
        party: index % 2 === 1 ? ('seller' as const) : ('buyer' as const),
        action: 'counter' as const,
        priceCents: 1_000 + index,
        at: LATER,
      })),
    };
    expect(() =>
      quoteDecider.decide(buyerAnswers({ action: 'counter', counterPriceCents: 990 }), {
        status: 'requested',
        quoteRequest: long,
      }),
    ).toThrow(/reached 20 steps/);
    const accepted = quoteDecider.decide(buyerAnswers({ action: 'accept' }), {
      status: 'requested',
      quoteRequest: long,
    });
    expect(negotiationStateOf(accepted[0]!.data.quoteRequest)).toBe('agreed');
  });
});
