/**
 * A decider is three pure functions (after emmett): `decide` turns a command and the current state into new
 * events (or throws an AppError), `evolve` folds one event into the state, `initialState` starts the fold.
 * Deciders never read the clock or do I/O: time and ids arrive in the command.
 */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
}

export interface Command<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
  readonly metadata: CommandMetadata;
}

export interface CommandMetadata {
  /** Epoch milliseconds at which the command is decided. */
  readonly now: number;
  readonly actor: Actor;
  readonly correlationId?: string;
  readonly causationId?: string;
  readonly traceparent?: string;
}

/** Who asked, and the trace of the request: what a service's command input carries, recorded on every event. */
export interface CommandContext {
  readonly actor: Actor;
  readonly correlationId?: string | undefined;
  readonly traceparent?: string | undefined;
}

export interface Actor {
  readonly kind: 'seller' | 'buyer' | 'admin' | 'system' | 'anonymous';
  readonly id: string;
}

export interface Decider<C extends Command, E extends DomainEvent, S> {
  readonly decide: (command: C, state: S) => readonly E[];
  readonly evolve: (state: S, event: E) => S;
  readonly initialState: () => S;
}

/** Folds events into a state with the decider's evolve. */
export const fold = <C extends Command, E extends DomainEvent, S>(
  decider: Decider<C, E, S>,
  events: readonly E[],
  state: S = decider.initialState(),
): S => events.reduce(decider.evolve, state);
