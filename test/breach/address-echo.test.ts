/**
 * A vendor that names its report after the person's own address, in a form the address pattern
 * misses: glued to a date or digits (`bob.smith@example.org-20261128`, `…org2026`), the domain
 * echoed in Unicode when punycode was sent (`jurgen@müller.de`), the `@` written `&#64;` or
 * `&#x40;`, in any case. The forms are drawn (fixed seed); each is run through the synthesized
 * BreachReport definition. The report is still archived (its exact name kept with the request),
 * and no form of either address reaches recon.json, the run's and the archive's manifests, a
 * state payload, a log line or the terminal.
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeResult } from '#local/cli/breach-command';
import { runBreachReport } from '#local/runner/breach-run';
import { listKeys, readObject } from '../kit/s3.ts';
import { bed, RESULTS_BUCKET, runOptions, useBreachRun } from './fixture.ts';

useBreachRun();

const ADDRESSES = [
  { local: 'bob.smith', domain: 'example.org' },
  { local: 'jurgen', domain: 'müller.de' },
] as const;
const PERSON = { name: 'Bob Smith', emails: ADDRESSES.map(({ local, domain }) => `${local}@${domain}`) };

/** How the report name writes an address: which one, the `@`, the domain's form, the case, the glue. */
const echoedName = fc
  .record({
    address: fc.constantFrom(...ADDRESSES),
    at: fc.constantFrom('@', '%40', '&#64;', '&#x40;'),
    domainForm: fc.constantFrom('as typed', 'punycode', 'unicode'),
    casing: fc.constantFrom('as typed', 'lower', 'upper'),
    before: fc.constantFrom('', 'rpt-', '2026', 'x'),
    after: fc.constantFrom('-20261128', '2026', '_a1b2c3', 'q', '-'),
  })
  .map(({ address, at, domainForm, casing, before, after }) => {
    const ascii = domainToASCII(address.domain);
    const domain =
      domainForm === 'punycode' ? ascii : domainForm === 'unicode' ? domainToUnicode(ascii) : address.domain;
    const written = `${address.local}${at}${domain}`;
    const cased =
      casing === 'lower' ? written.toLowerCase() : casing === 'upper' ? written.toUpperCase() : written;
    return `${before}${cased}${after}`;
  });

/** Every stored body and key but the person's own request record and the ZIPs: where no address may be. */
async function everythingKept(): Promise<string> {
  const parts: string[] = [bed.logger.text()];
  for (const key of await listKeys(bed.s3.client, RESULTS_BUCKET)) {
    parts.push(key);
    if (key.includes('/requests/') || key.endsWith('.zip')) continue;
    parts.push((await readObject(bed.s3.client, RESULTS_BUCKET, key)).toString('utf8'));
  }
  return parts.join('\n');
}

/** Each address's domain in every form it could be written, lower-cased. */
const DOMAIN_FORMS = ADDRESSES.flatMap(({ domain }) => {
  const ascii = domainToASCII(domain);
  return [domain, ascii, domainToUnicode(ascii)];
});

describe('a report named after the person, in forms the address pattern misses', () => {
  it('is archived, and no form of the address is kept, printed or logged', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(echoedName, async (reportName) => {
        run += 1;
        bed.sim.scriptReportName(reportName);
        const payloads: unknown[] = [];

        const result = await runBreachReport(
          runOptions({ onStatePayload: (_state, payload) => payloads.push(payload) }),
          { ...PERSON, requestId: `a${run}` },
        );

        expect(result.outcome).toBe('archived');
        const kept = [
          await everythingKept(),
          JSON.stringify(payloads),
          JSON.stringify(result),
          describeResult(result, '/out'),
        ]
          .join('\n')
          .toLowerCase();
        for (const form of DOMAIN_FORMS) expect(kept).not.toContain(form.toLowerCase());
        expect(kept).toContain('[redacted]');
      }),
      { seed: 43, numRuns: 8 },
    );
  });
});
