import { conflict } from '@marketplace/platform';
import type { Command, Decider, DomainEvent } from '../../src/index.js';

/** A small aggregate for the package's tests: stock that can be added and removed, never below zero. */
export type StockEvent =
  | DomainEvent<'StockAdded', { readonly quantity: number }>
  | DomainEvent<'StockRemoved', { readonly quantity: number }>;

export type StockCommand =
  Command<'AddStock', { readonly quantity: number }> | Command<'RemoveStock', { readonly quantity: number }>;

export interface StockState {
  readonly quantity: number;
}

export const stockDecider: Decider<StockCommand, StockEvent, StockState> = {
  decide: (command, state) => {
    const { quantity } = command.data;
    switch (command.type) {
      case 'AddStock':
        return quantity === 0 ? [] : [{ type: 'StockAdded', data: { quantity } }];
      case 'RemoveStock':
        if (quantity > state.quantity) throw conflict(`only ${state.quantity} in stock`);
        return [{ type: 'StockRemoved', data: { quantity } }];
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'StockAdded':
        return { quantity: state.quantity + event.data.quantity };
      case 'StockRemoved':
        return { quantity: state.quantity - event.data.quantity };
    }
  },
  initialState: () => ({ quantity: 0 }),
};

export const stockCommand = <T extends StockCommand['type']>(
  type: T,
  quantity: number,
  now = Date.UTC(2026, 0, 2, 3, 4, 5),
): Extract<StockCommand, { type: T }> =>
  ({ type, data: { quantity }, metadata: { now, actor: { kind: 'seller', id: '7' } } }) as Extract<
    StockCommand,
    { type: T }
  >;
