import { validationError } from '@marketplace/platform';
import type { Actor } from './decider.js';

// A record rather than a list, so the compiler checks it names every kind of the Actor type.
const ACTOR_KINDS: Record<Actor['kind'], true> = {
  seller: true,
  buyer: true,
  admin: true,
  system: true,
  anonymous: true,
};

export const isActorKind = (kind: string): kind is Actor['kind'] => Object.hasOwn(ACTOR_KINDS, kind);

/**
 * The actor of a command as a transport received it (e.g. the `marketplace.common.v1.Actor` message). Throws
 * AppError('validation') for a missing actor or an unknown kind: a caller's mistake, not a crash.
 */
export const parseActor = (actor: { readonly kind: string; readonly id: string } | undefined): Actor => {
  if (actor === undefined)
    throw validationError('actor is required', [{ path: 'actor', message: 'is required' }]);
  const { kind, id } = actor;
  if (!isActorKind(kind)) {
    const message = `must be one of ${Object.keys(ACTOR_KINDS).join(', ')}`;
    throw validationError(`actor.kind ${message}`, [{ path: 'actor/kind', message }]);
  }
  return { kind, id };
};
