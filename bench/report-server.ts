/**
 * A scan report of any size for the output benches, served by a plain byte server: the simulator's
 * JSON generator runs at about 10 MiB/s here, which would measure the generator, not the fetch.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startReportServer(bytes: number): Promise<{ server: Server; url: string }> {
  // `bytes` of JSON-ish text, generated chunk by chunk, never held whole.
  const block = Buffer.alloc(1024 * 1024, '{"finding":"synthetic","severity":"info"}\n');
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes });
    let sent = 0;
    const pump = (): void => {
      while (sent < bytes) {
        const chunk = block.subarray(0, Math.min(block.length, bytes - sent));
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
