/**
 * A generated vendor that echoes what it was sent wherever it controls the text: the key and the
 * person's addresses, in drawn forms (as typed, upper-cased, the domain in punycode or Unicode,
 * the `@` escaped, glued to a date), drawn into every response header of every answer (recon,
 * download redirect, the storage origin's ZIP) and into the report's name. Each drawn vendor runs
 * one person through the synthesized BreachReport definition (fixed seed). Whatever the outcome,
 * no form of the key or an address reaches recon.json, a manifest, a state payload, a log line,
 * an S3 key or object header, or the terminal; the leak watch (test/setup.ts) searches all of it
 * as well.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { domainToASCII, domainToUnicode } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeResult } from '#local/cli/breach-command';
import { runBreachReport } from '#local/runner/breach-run';
import { bed, runOptions, useBreachRun } from './fixture.ts';

const WORD_KEY = 'LanternQuarryMeridian';

useBreachRun({ simulator: { apiKey: WORD_KEY } });

const ADDRESSES = [
  { local: 'bob.smith', domain: 'example.org' },
  { local: 'jurgen', domain: 'müller.de' },
] as const;
const PERSON = { name: 'Bob Smith', emails: ADDRESSES.map(({ local, domain }) => `${local}@${domain}`) };

/** One address, written as a vendor might echo it. */
const echoedAddress = fc
  .record({
    address: fc.constantFrom(...ADDRESSES),
    at: fc.constantFrom('@', '%40', '&#64;', '&#x40;'),
    domainForm: fc.constantFrom('as typed', 'punycode', 'unicode'),
    upper: fc.boolean(),
    glue: fc.constantFrom('', '-20261128', '2026', '_x'),
  })
  .map(({ address, at, domainForm, upper, glue }) => {
    const ascii = domainToASCII(address.domain);
    const domain =
      domainForm === 'punycode' ? ascii : domainForm === 'unicode' ? domainToUnicode(ascii) : address.domain;
    const written = `${address.local}${at}${domain}${glue}`;
    return upper ? written.toUpperCase() : written;
  });

/** A header value holding the key, an address, or both, in a drawn frame. */
const echoedValue = fc
  .tuple(
    fc.constantFrom('{key}', 'for={key}', '"{key}"', 'text/plain; served-for={key}', 'application/{key}'),
    echoedAddress,
    fc.constantFrom('key', 'address', 'both'),
  )
  .map(([frame, address, which]) =>
    which === 'key' ? frame : which === 'address' ? frame.replace('{key}', address) : `${frame}; ${address}`,
  );

const HEADER_NAMES = [
  'content-type',
  'etag',
  'x-request-id',
  'request-id',
  'x-amzn-requestid',
  'content-disposition',
  'content-language',
  'link',
  'server',
  'warning',
  'last-modified',
] as const;

const vendor = fc.record({
  recon: fc.dictionary(fc.constantFrom(...HEADER_NAMES), echoedValue, { minKeys: 1 }),
  download: fc.dictionary(fc.constantFrom(...HEADER_NAMES), echoedValue, { minKeys: 1 }),
  storage: fc.dictionary(fc.constantFrom(...HEADER_NAMES), echoedValue, { minKeys: 1 }),
  reportName: fc
    .tuple(fc.constantFrom('rpt-', ''), echoedAddress)
    .map(([prefix, address]) => `${prefix}${address}`),
});

/** Every file s3rver keeps but the person's own records: object bytes, keys and header files. */
async function everythingInS3(): Promise<string> {
  const entries = await readdir(bed.s3.directory, { recursive: true, withFileTypes: true });
  const files = entries.filter(
    (entry) =>
      entry.isFile() &&
      !/\.zip\._S3rver_object$|\.report-name\.json\._S3rver_object$/.test(entry.name) &&
      !join(entry.parentPath, entry.name).includes('/requests/'),
  );
  const texts = await Promise.all(files.map((entry) => readFile(join(entry.parentPath, entry.name), 'utf8')));
  return [...files.map((entry) => join(entry.parentPath, entry.name)), ...texts].join('\n');
}

/** The key and each address's domain in every form, lower-cased: none may be anywhere. */
const NEVER = [
  WORD_KEY,
  ...ADDRESSES.flatMap(({ domain }) => {
    const ascii = domainToASCII(domain);
    return [domain, ascii, domainToUnicode(ascii)];
  }),
].map((form) => form.toLowerCase());

describe('a generated vendor echoing the key and the addresses into every header and the report name', () => {
  it('leaves no form of either in anything the run keeps, prints or logs', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(vendor, async (drawn) => {
        run += 1;
        bed.sim.clearFaults();
        bed.sim.scriptReportName(drawn.reportName);
        for (const [api, path, set] of [
          ['breach', '/recon', drawn.recon],
          ['breach', '/download/', drawn.download],
          ['storage', '/reports/', drawn.storage],
        ] as const) {
          bed.sim.addFault({ api, path, times: Number.POSITIVE_INFINITY, fault: { type: 'headers', set } });
        }
        const payloads: unknown[] = [];

        const result = await runBreachReport(
          runOptions({ onStatePayload: (_state, payload) => payloads.push(payload) }),
          { ...PERSON, requestId: `g${run}` },
        );

        expect(['archived', 'failed']).toContain(result.outcome);
        const kept = [
          await everythingInS3(),
          bed.logger.text(),
          JSON.stringify(payloads),
          JSON.stringify(result),
          describeResult(result, '/out'),
        ]
          .join('\n')
          .toLowerCase();
        for (const form of NEVER) expect(kept).not.toContain(form);
      }),
      { seed: 43, numRuns: 10 },
    );
  });
});
