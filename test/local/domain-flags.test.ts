/**
 * One domain, one verdict: `scan`'s list lines, `reconcile --orphan-domain` and
 * `rotate --check-domain` are judged by the same function with the same settings, and say the
 * same reason. `reconcile` once took `foo.local`, printed `scan undefined` and exited 0.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filesUnder, runCli } from './cli-run.ts';

let outDir: string;
beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'domain-flags-'));
});
afterEach(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe.each([['foo.local'], ['not_a_domain!!']])('%s', (domain) => {
  it('is refused with the same reason by scan, reconcile --orphan-domain and rotate --check-domain', async () => {
    const reconcile = await runCli(['reconcile', '--out', outDir, '--orphan-domain', domain]);
    const rotate = await runCli(['rotate', '--out', outDir, '--check-domain', domain]);

    expect(reconcile).toExitWith(2);
    expect(rotate).toExitWith(2);
    const reason = /^error: Invalid --orphan-domain: (.+); nothing was scanned\n$/.exec(
      reconcile.stderr,
    )?.[1];
    expect(reason, reconcile.stderr).toBeDefined();
    expect(rotate.stderr).toBe(`error: Invalid --check-domain: ${reason}; nothing was rotated\n`);
    // Refused before anything ran: nothing written.
    expect(await filesUnder(outDir)).toEqual([]);

    const scan = await runCli(['scan', domain, '--out', outDir, '--verbose']);

    expect(scan).toExitWith(1);
    expect(scan.stdout).toMatch(new RegExp(`^arg 1 .*${escapeRegExp(reason ?? '(none)')}`, 'm'));
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
