/**
 * A run's folder is the record of that run: the list as that run uploaded it, beside its summary,
 * whatever an earlier run into the same `--out` kept; and what the tool itself carries from run to
 * run (the learned scan durations) is carried on, never reported as a file of the user's.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { learnedDurationsKey } from '../../lambdas/scan/learned-durations.ts';
import { filesUnder, runCli } from './cli-run.ts';

const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '1'];

let dir: string;
let out: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-folder-'));
  out = join(dir, 'out');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The run folder `<out>/latest` points at, its summary and its copy of the list. */
async function latestRun(name: string): Promise<{ summary: ListSummary; input: string }> {
  const folder = join(out, 'latest');
  // Asserted, not only read: a run that keeps no copy of its own fails here, by what it kept.
  expect(await filesUnder(folder)).toEqual(expect.arrayContaining(['summary.json', `input/${name}`]));
  return {
    summary: JSON.parse(await readFile(join(folder, 'summary.json'), 'utf8')) as ListSummary,
    input: await readFile(join(folder, 'input', name), 'utf8'),
  };
}

describe('a rerun of an edited list into the same --out', () => {
  it("keeps each run's own copy of the list beside its summary, and calls nothing of the tool's the user's", async () => {
    const list = join(dir, 'team.txt');
    // Three lines: the edit of the last one is what the second run differs by; each line more
    // costs both runs a scan and proves nothing more.
    const first = Array.from({ length: 3 }, (_, index) => `t${index + 1}.example.com`);
    await writeFile(list, `${first.join('\n')}\n`);
    const one = await runCli(['scan', '--domains-file', list, '--out', out, ...QUICK_WAITS]);
    expect(one).toExitWith(0);
    const earlier = await latestRun('team.txt');
    // One learned record per domain (its labels reversed), kept in the results bucket between runs.
    const learnedPath = (domain: string) => join(out, 'pipeline-results', learnedDurationsKey(domain));
    const samples = async (domain: string) =>
      (JSON.parse(await readFile(learnedPath(domain), 'utf8')) as { samples: unknown[] }).samples.length;
    const learnedBefore = await samples('t1.example.com');

    // The user edits line 3, and runs the list again.
    const second = [...first.slice(0, 2), 'edited.example.com'];
    await writeFile(list, `${second.join('\n')}\n`);
    const two = await runCli(['scan', '--domains-file', list, '--out', out, ...QUICK_WAITS]);

    expect(two).toExitWith(0);
    const later = await latestRun('team.txt');
    expect(later.summary.runId).not.toBe(earlier.summary.runId);
    // Each folder: the list it ran, and a summary that agrees with it line by line.
    for (const run of [earlier, later]) {
      const lines = run.input.trimEnd().split('\n');
      for (const row of run.summary.domains) expect(lines[row.line - 1], `line ${row.line}`).toBe(row.domain);
    }
    expect(later.summary.domains.find((row) => row.line === 3)?.domain).toBe('edited.example.com');
    expect(earlier.input).toBe(`${first.join('\n')}\n`);
    // The learned durations are the tool's: carried on from the first run, updated, not "yours".
    expect(two.stdout).not.toContain('Kept your existing');
    // Each run carries on from the last one's records (as the bucket keeps them in AWS) and adds to them.
    expect(await samples('t1.example.com')).toBe(learnedBefore + 1);
    expect(await samples('edited.example.com')).toBe(1);
  });
});
