/**
 * The README is a front page that sends readers into docs/, so a link that leads nowhere is a dead
 * end for exactly the reader it was written for. Every relative link in README.md and docs/**.md
 * must name a file that exists and, with a `#anchor`, a heading that target has.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { anchorsIn, brokenLinks, linksIn, markdownFilesUnder } from './markdown-links.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const PAGES = [join(ROOT, 'README.md'), ...markdownFilesUnder(join(ROOT, 'docs'))];

describe('links in README.md and docs/', () => {
  it('reads every page and finds links in them', () => {
    expect(PAGES.length).toBeGreaterThan(20);
    const links = PAGES.flatMap((page) => linksIn(readFileSync(page, 'utf8'), page));
    expect(links.length).toBeGreaterThan(100);
  });

  it('every relative link names an existing file and, with #anchor, an existing heading', () => {
    const broken = brokenLinks(ROOT, PAGES).map(
      ({ page, line, target, problem }) => `${page}:${line} (${target}): ${problem}`,
    );
    expect(broken).toEqual([]);
  });
});

describe('the link checker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'links-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports a missing file, a missing anchor and a missing same-page anchor, and nothing else', () => {
    mkdirSync(join(dir, 'docs'));
    writeFileSync(
      join(dir, 'docs', 'page.md'),
      ['# A page', '', '## Cost notes: `npm run bench`', '', '## Cost notes: `npm run bench`', ''].join('\n'),
    );
    writeFileSync(
      join(dir, 'README.md'),
      [
        '# Front',
        '',
        'Good: [page](docs/page.md), [anchor](docs/page.md#cost-notes-npm-run-bench),',
        '[second](docs/page.md#cost-notes-npm-run-bench-1), [folder](docs/), [web](https://example.com/x.md),',
        '[self](#front), [with title](docs/page.md "Title").',
        '',
        'Broken: [gone](docs/gone.md) and [anchor](docs/page.md#no-such-heading) and [self](#nowhere).',
        '',
        '```md',
        '[inside a code block](docs/also-gone.md)',
        '```',
        '',
        'A code span is an example, not a link: `[x](docs/missing.md)`.',
        '',
        '[ref]: docs/missing-ref.md',
      ].join('\n'),
    );

    const broken = brokenLinks(dir, [join(dir, 'README.md')]);

    expect(broken.map(({ line, target, problem }) => ({ line, target, problem }))).toEqual([
      { line: 7, target: 'docs/gone.md', problem: 'no file docs/gone.md' },
      {
        line: 7,
        target: 'docs/page.md#no-such-heading',
        problem: 'no heading #no-such-heading in docs/page.md',
      },
      { line: 7, target: '#nowhere', problem: 'no heading #nowhere in README.md' },
      { line: 15, target: 'docs/missing-ref.md', problem: 'no file docs/missing-ref.md' },
    ]);
  });

  it('derives anchors as GitHub does: punctuation dropped, spaces to hyphens, repeats numbered', () => {
    const anchors = anchorsIn(
      [
        '# Running locally: `npm start`',
        '## What is checked before deploy, and what only a deploy shows',
        '### Alarms on the vendor’s own counts',
        '## Tests',
        '## Tests',
        '```',
        '# not a heading',
        '```',
        '<a id="custom-anchor"></a>',
      ].join('\n'),
    );
    expect([...anchors]).toEqual([
      'running-locally-npm-start',
      'what-is-checked-before-deploy-and-what-only-a-deploy-shows',
      'alarms-on-the-vendors-own-counts',
      'tests',
      'tests-1',
      'custom-anchor',
    ]);
  });
});
