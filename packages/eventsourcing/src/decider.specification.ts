import { AssertionError, deepStrictEqual } from 'node:assert';
import { inspect } from 'node:util';
import { fold, type Command, type Decider, type DomainEvent } from './decider.js';

export type ErrorClass = abstract new (...args: never[]) => unknown;

/** Accepts the error a decider threw: a class it must be an instance of, or a predicate. */
export type ErrorCheck = ErrorClass | ((error: unknown) => boolean);

export interface DeciderThen<E extends DomainEvent> {
  /** Asserts that decide returned exactly these events (deep, strict equality), in this order. */
  then(expected: readonly E[]): void;
  /** Asserts that decide threw, and that the error passes `check` when one is given. */
  thenThrows(check?: ErrorCheck): void;
}

export interface DeciderWhen<C extends Command, E extends DomainEvent> {
  when(command: C): DeciderThen<E>;
}

export interface DeciderGiven<C extends Command, E extends DomainEvent> {
  /** The stream's history, folded with evolve into the state the command is decided against. */
  given(events: readonly E[]): DeciderWhen<C, E>;
}

type Outcome<E> =
  | { readonly kind: 'returned'; readonly events: readonly E[] }
  | { readonly kind: 'threw'; readonly error: unknown };

const isErrorClass = (check: ErrorCheck): check is ErrorClass =>
  check === Error || check.prototype instanceof Error;

const show = (value: unknown): string => inspect(value, { depth: 6, breakLength: 100 });

/**
 * Given/when/then for deciders (after emmett's DeciderSpecification). It imports no test runner: a failed
 * expectation throws an AssertionError from node:assert, whose message carries a diff, so it reads well under
 * jest, node:test or a plain script.
 *
 *   DeciderSpecification.for(listingDecider).given([created]).when(updatePrice).then([priceChanged]);
 */
export const DeciderSpecification = {
  for<C extends Command, E extends DomainEvent, S>(decider: Decider<C, E, S>): DeciderGiven<C, E> {
    return {
      given: (history) => ({
        when: (command) => {
          const decide = (): Outcome<E> => {
            const state = fold(decider, history);
            try {
              return { kind: 'returned', events: decider.decide(command, state) };
            } catch (error) {
              return { kind: 'threw', error };
            }
          };
          return {
            then(expected) {
              // `then` makes this object look like a promise to `await` and to test runners given it.
              if (!Array.isArray(expected)) {
                throw new TypeError(
                  'DeciderSpecification is not a promise: call .then([...expected events])',
                );
              }
              const outcome = decide();
              if (outcome.kind === 'threw') {
                throw new AssertionError({
                  message: `expected ${command.type} to produce events, but it threw ${show(outcome.error)}`,
                });
              }
              try {
                deepStrictEqual(outcome.events, expected);
              } catch (error) {
                if (!(error instanceof AssertionError)) throw error;
                // The message carries node's diff; actual and expected are left out so jest adds no second one.
                throw new AssertionError({
                  message: `${command.type} produced other events than expected.\n${error.message}`,
                });
              }
            },
            thenThrows(check) {
              const outcome = decide();
              if (outcome.kind === 'returned') {
                throw new AssertionError({
                  message: `expected ${command.type} to throw, but it produced ${show(outcome.events)}`,
                });
              }
              if (check === undefined) return;
              const accepted = isErrorClass(check) ? outcome.error instanceof check : check(outcome.error);
              if (!accepted) {
                throw new AssertionError({
                  message: `${command.type} threw an error the check rejected: ${show(outcome.error)}`,
                });
              }
            },
          };
        },
      }),
    };
  },
};
