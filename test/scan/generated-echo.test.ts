/**
 * A generated vendor that echoes the key it was sent into every response header of every answer
 * of a scan (the start, each status, the report, logs and debug): drawn header names, drawn
 * frames around the key (a bare value, a quoted ETag, a `Content-Type` parameter or subtype, a
 * coding of its own). Each drawn vendor runs one domain through the synthesized ScanDomain
 * definition (fixed seed); whatever the outcome, the key is in no state payload, log line, S3
 * object, key or object header. The leak watch (test/setup.ts) searches all of it as well.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { execute, logger, s3, sim, useScanExecution } from './scan-execution-fixture.ts';

const WORD_KEY = 'OrchardBeaconMarigold';

useScanExecution({ apiKey: WORD_KEY });

const HEADER_NAMES = [
  'content-type',
  'etag',
  'content-encoding',
  'x-request-id',
  'request-id',
  'x-amzn-requestid',
  'content-disposition',
  'link',
  'server',
  'warning',
] as const;
const FRAMES = [
  '{key}',
  '"{key}"',
  'W/"{key}"',
  'text/plain; served-for={key}',
  'application/{key}',
  'x-{key}',
];
const headers = fc.dictionary(fc.constantFrom(...HEADER_NAMES), fc.constantFrom(...FRAMES), { minKeys: 1 });
const vendor = fc.record({
  start: headers,
  status: headers,
  report: headers,
  logs: headers,
  debug: headers,
});

async function everythingInS3(): Promise<string> {
  const entries = await readdir(s3.directory, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile());
  const texts = await Promise.all(
    files.map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1')),
  );
  return [...files.map((entry) => entry.name), ...texts].join('\n');
}

describe('a generated vendor echoing the key into every response header of a scan', () => {
  it('leaves it in nothing the run keeps or logs', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(vendor, async (drawn) => {
        run += 1;
        sim.clearFaults();
        for (const [method, path, set] of [
          ['POST', '/scan', drawn.start],
          ['GET', '/status/', drawn.status],
          ['GET', '/report/', drawn.report],
          ['GET', '/logs/', drawn.logs],
          ['GET', '/debug/', drawn.debug],
        ] as const) {
          sim.addFault({
            api: 'scan',
            method,
            path,
            times: Number.POSITIVE_INFINITY,
            fault: { type: 'headers', set },
          });
        }

        const result = await execute(`echo-${run}.example.com`);

        expect(result.events.length).toBeGreaterThan(0);
        const kept = [JSON.stringify(result.events), logger.text(), await everythingInS3()].join('\n');
        expect(kept.toLowerCase()).not.toContain(WORD_KEY.toLowerCase());
      }),
      { seed: 43, numRuns: 10 },
    );
  });
});
