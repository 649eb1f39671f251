import { createServer } from 'node:http';

/**
 * The same-run limit of the HTTP scenarios: raw `node:http` answering every request with the same JSON body (the
 * size of a real answer), in its own process like the gateway. Forked with IPC; sends its port once listening and
 * serves until killed.
 */
const body = Buffer.from(process.argv[2] ?? '{}');
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
});
