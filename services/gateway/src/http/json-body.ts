import express from 'express';
import type { RequestHandler } from 'express';
import { HttpProblem } from './problem.js';

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * For routes that take a body: a body in any other media type is 415 (before reading it), then the JSON parser
 * reads at most `limitBytes` (413 beyond; counted after decompression) and rejects malformed JSON (400).
 */
export const jsonBody = (limitBytes: number): RequestHandler[] => [
  (req, _res, next) => {
    if (!req.is(JSON_TYPES)) {
      throw new HttpProblem('unsupported-media-type', 'send the request body as application/json');
    }
    next();
  },
  // Any JSON value parses; the route's schema then says precisely what it expected (an object, usually).
  express.json({ limit: limitBytes, type: JSON_TYPES, strict: false }),
];
