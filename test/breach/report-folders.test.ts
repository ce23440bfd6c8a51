/**
 * Report folders reveal nothing of the report name without the report naming key. The audit that
 * found the old names recoverable guessed the address inside a report name from its folder alone:
 * the slug kept most of the name, and the hash was unkeyed, so each guess could be checked. That
 * attack is run here against both schemes: it recovers the address from the old folder, and
 * nothing from the keyed one.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { slugOf } from '#lambdas/breach/contracts';
import { reportFolder } from '#lambdas/breach/identity';
import { redactText } from '#lambdas/platform/redaction/redact';
import { REPORT_NAMING_KEY } from './fixture.ts';

const ADDRESS = 'jane.roe@corp-example.com';
const reportNameFor = (address: string) => `Exposure report for ${address} (20261127T101500Z)`;

/** An organisation's plausible addresses: first.last at its domain, from common names. */
function candidateAddresses(): string[] {
  const first = ['jane', 'john', 'mary', 'james', 'anna', 'peter', 'lisa', 'mark', 'sara', 'paul'];
  const last = ['roe', 'doe', 'smith', 'jones', 'brown', 'lee', 'khan', 'garcia', 'miller', 'davis'];
  return first
    .flatMap((f) => last.flatMap((l) => [`${f}.${l}`, `${f[0]}${l}`, `${f}${l}`]))
    .map((local) => `${local}@corp-example.com`);
}

/** The unkeyed scheme the audit broke: a slug of the redacted name and an unkeyed hash. */
function unkeyedFolder(reportName: string): string {
  return `breach/reports/${slugOf(redactText(reportName))}-${createHash('sha256').update(reportName).digest('hex').slice(0, 16)}/`;
}

/** The audit's attack: for each guess, rebuild the folder name as the scheme would and compare. */
function recover(folder: string, scheme: (reportName: string) => string): string[] {
  return candidateAddresses().filter((guess) => scheme(reportNameFor(guess)) === folder);
}

describe('report folder names', () => {
  it('let the audit recover the address from an unkeyed folder name (the old scheme)', () => {
    const folder = unkeyedFolder(reportNameFor(ADDRESS));
    expect(recover(folder, unkeyedFolder)).toEqual([ADDRESS]);
  });

  it('reveal nothing of the name without the key: no slug, no unkeyed hash, nothing to check a guess against', () => {
    const name = reportNameFor(ADDRESS);
    const folder = reportFolder(name, REPORT_NAMING_KEY);

    expect(folder).toMatch(/^breach\/reports\/report-[0-9a-f]{32}\/$/);
    // The attack with every unkeyed rebuild of the name it knows: the old scheme, the name's slug,
    // the hashes of the name and of the address.
    const unkeyed = [
      unkeyedFolder,
      (n: string) => `breach/reports/report-${createHash('sha256').update(n).digest('hex').slice(0, 32)}/`,
      (n: string) => `breach/reports/${slugOf(redactText(n))}/`,
    ];
    for (const scheme of unkeyed) expect(recover(folder, scheme)).toEqual([]);
    // No part of the name or the address survives in the folder.
    for (const part of ['jane', 'roe', 'corp', 'exposure', 'report-for', '20261127']) {
      expect(folder.slice('breach/reports/report-'.length)).not.toContain(part);
    }
    // With the key (and only with it) the folder is found again, which reconciliation relies on.
    expect(recover(folder, (n) => reportFolder(n, REPORT_NAMING_KEY))).toEqual([ADDRESS]);
    expect(recover(folder, (n) => reportFolder(n, 'another-key-0123456789abcdef-0123456789abc'))).toEqual([]);
  });
});
