/**
 * docs/architecture.md walks one scan from its upload to its manifest, file by file. The layout
 * promises that walk takes at most twelve files, and every Lambda on the way is one of them: a
 * Lambda whose entry sat in a file of its own (an adapter beside its step) would have to be listed
 * too, and the walk would outgrow its bound.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { handlerEntryPath, handlerForState } from '../../lambdas/registry.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const HEADING = '### Following one scan, from an upload to its manifest';

/** The Task states one scan passes through, from its list run to its manifest. */
const STATES_ON_THE_WAY = [
  'PrepareDomainList',
  'StartScan',
  'PollScanStatus',
  'FetchReport',
  'FetchLogs',
  'FetchDebug',
  'WriteManifest',
];

/** The files of the walk's table: the backticked path in the last cell of each numbered row. */
function walkFiles(): string[] {
  const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const start = page.indexOf(HEADING);
  expect(start, `docs/architecture.md has the heading "${HEADING}"`).toBeGreaterThan(-1);
  const section = page.slice(start + HEADING.length).split(/^#{1,3} /m)[0] ?? '';
  return [...section.matchAll(/^\| \d+ \|.*\| `([^`]+)` \|$/gm)].map((match) => match[1] ?? '');
}

describe('following one scan (docs/architecture.md)', () => {
  it('takes at most twelve files, each listed once, each existing', () => {
    const files = walkFiles();
    expect(files.length).toBeGreaterThan(5);
    expect(files.length).toBeLessThanOrEqual(12);
    expect(new Set(files).size).toBe(files.length);
    expect(files.filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
  });

  it("lists the module of every Lambda on the way: the start function and each Task state's", () => {
    const lambdas = [
      'start-domain-list',
      ...STATES_ON_THE_WAY.map((state) => {
        const handler = handlerForState(state);
        expect(handler, `lambdas/registry.ts maps ${state} to a handler`).toBeDefined();
        return handler as string;
      }),
    ];
    const listed = new Set(walkFiles());
    expect(lambdas.map((handler) => handlerEntryPath(handler)).filter((path) => !listed.has(path))).toEqual(
      [],
    );
  });
});
