import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Problems } from './problem.js';
import { PROBLEM_CONTENT_TYPE } from './problem.js';

/** What Node's parser errors answer without a body, as Node itself does (docs/security.md, "Hostile input"). */
const BARE_STATUS_OF_CODE: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/** A character no header line may hold: control characters but tab (RFC 9110, section 5.5). */
// eslint-disable-next-line no-control-regex
const FORBIDDEN_IN_HEADER = /[\x00-\x08\x0a-\x1f\x7f]/;
/** A header name's characters (RFC 9110 `token`); the rest of a hostile name is not echoed. */
const NOT_TOKEN = /[^!#$%&'*+\-.^_`|~0-9A-Za-z]/g;
const HEADER_NAME_THEN_COLON = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:/;

/**
 * The header of a refused request that holds a forbidden character or whose name is not a token, named as the
 * client sent it (at most 64 characters, non-token characters as `?`), or undefined when no header line does
 * (the request line or the framing was at fault).
 */
export const offendingHeaderOf = (rawPacket: Buffer | undefined): string | undefined => {
  if (rawPacket === undefined) return undefined;
  const head = rawPacket.toString('latin1');
  const end = head.indexOf('\r\n\r\n');
  const lines = (end === -1 ? head : head.slice(0, end)).split('\r\n').slice(1);
  const offending = lines.find(
    (line) => FORBIDDEN_IN_HEADER.test(line) || !HEADER_NAME_THEN_COLON.test(line),
  );
  if (offending === undefined) return undefined;
  const colon = offending.indexOf(':');
  const name = (colon === -1 ? offending : offending.slice(0, colon)).slice(0, 64).replace(NOT_TOKEN, '?');
  return name;
};

const rawAnswer = (status: number, problem?: object): string => {
  const body = problem === undefined ? '' : JSON.stringify(problem);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    (problem === undefined ? '' : `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n`) +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
};

/**
 * Answers the requests Node's HTTP parser refuses before any route sees them (a NUL or other control character
 * in a header, a malformed request line) with a 400 problem naming the header at fault, where Node alone
 * answers a bare 400. Overflows and timeouts keep Node's own answers; a connection the client reset, or one
 * whose answer to an earlier request is under way, is closed without one.
 */
export const answerUnparsableRequests = (server: Server, problems: Problems): void => {
  server.on('clientError', (error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex) => {
    const code = error.code ?? '';
    // As Node does: no answer over one that has begun (a response in flight on this connection, in
    // `_httpMessage`, which Node's own handler reads), nor on a connection the client reset.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    const bare = BARE_STATUS_OF_CODE[code];
    if (bare !== undefined || !code.startsWith('HPE_')) {
      socket.end(rawAnswer(bare ?? 400));
      return;
    }
    const header = offendingHeaderOf(error.rawPacket);
    const problem =
      header === undefined
        ? problems.of(
            'validation-error',
            'The request is not valid HTTP/1.1: its request line or framing is malformed.',
          )
        : problems.of(
            'validation-error',
            `The ${header} header holds a character HTTP does not allow (a control character such as NUL).`,
            [{ path: header, message: 'must not hold control characters' }],
          );
    socket.end(rawAnswer(400, problem));
  });
};
