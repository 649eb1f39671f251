import type { RequestHandler } from 'express';
import type { Problems } from './problem.js';
import { sendProblem } from './problem.js';

/**
 * Mounted with `.all()` after a route's real methods: OPTIONS answers 204 with Allow, any other method 405
 * with Allow. GET routes also take HEAD (Express answers it from the GET handler).
 */
export const methodNotAllowed = (problems: Problems, methods: readonly string[]): RequestHandler => {
  const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
  return (req, res) => {
    res.set('Allow', allow);
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    sendProblem(
      res,
      problems.of('method-not-allowed', `${req.method} is not allowed here; use ${methods.join(' or ')}`),
    );
  };
};
