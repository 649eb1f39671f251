import { AssertionError } from 'node:assert';
import { describe, expect, it } from '@jest/globals';
import { AppError, isAppError } from '@marketplace/platform';
import { DeciderSpecification } from '../src/index.js';
import { stockCommand, stockDecider } from './support/stock.decider.js';

const spec = DeciderSpecification.for(stockDecider);
const added = (quantity: number) => ({ type: 'StockAdded' as const, data: { quantity } });
const removed = (quantity: number) => ({ type: 'StockRemoved' as const, data: { quantity } });

/** The AssertionError a failing expectation throws. */
const failureOf = (expectation: () => void): AssertionError => {
  try {
    expectation();
  } catch (error) {
    if (error instanceof AssertionError) return error;
    throw error;
  }
  throw new Error('the expectation passed');
};

describe('DeciderSpecification', () => {
  it('passes when decide returns the expected events for the folded history', () => {
    spec
      .given([added(5), removed(2)])
      .when(stockCommand('RemoveStock', 3))
      .then([removed(3)]);
  });

  it('passes for a decision to change nothing', () => {
    spec.given([]).when(stockCommand('AddStock', 0)).then([]);
  });

  it('fails with a diff naming the command when the events differ', () => {
    const failure = failureOf(() =>
      spec
        .given([])
        .when(stockCommand('AddStock', 4))
        .then([added(5)]),
    );
    expect(failure.message).toContain('AddStock produced other events than expected');
    expect(failure.message).toMatch(/\+ +quantity: 4\n- +quantity: 5/);
  });

  it('fails when decide throws although events were expected, showing the error', () => {
    const failure = failureOf(() =>
      spec
        .given([added(1)])
        .when(stockCommand('RemoveStock', 2))
        .then([removed(2)]),
    );
    expect(failure.message).toMatch(
      /expected RemoveStock to produce events, but it threw .*only 1 in stock/s,
    );
  });

  it('accepts a thrown error with no check, with a class, or with a predicate', () => {
    const when = spec.given([added(1)]).when(stockCommand('RemoveStock', 2));
    when.thenThrows();
    when.thenThrows(AppError);
    when.thenThrows(Error);
    when.thenThrows((error) => isAppError(error) && error.kind === 'conflict');
  });

  it('fails when the thrown error does not pass the check', () => {
    const when = spec.given([added(1)]).when(stockCommand('RemoveStock', 2));
    expect(failureOf(() => when.thenThrows(TypeError)).message).toMatch(/threw an error the check rejected/);
    expect(failureOf(() => when.thenThrows(() => false)).message).toMatch(/only 1 in stock/);
  });

  it('fails when an error was expected but decide returned events', () => {
    const failure = failureOf(() =>
      spec
        .given([added(3)])
        .when(stockCommand('RemoveStock', 2))
        .thenThrows(),
    );
    expect(failure.message).toMatch(/expected RemoveStock to throw, but it produced .*StockRemoved/s);
  });

  it('decides anew for every expectation, so one when can be checked twice', () => {
    const when = spec.given([added(2)]).when(stockCommand('RemoveStock', 2));
    when.then([removed(2)]);
    when.then([removed(2)]);
  });

  it('explains itself when awaited by mistake instead of called with events', async () => {
    const when = spec.given([]).when(stockCommand('AddStock', 1));
    await expect(Promise.resolve(when)).rejects.toThrow(/is not a promise/);
  });
});
