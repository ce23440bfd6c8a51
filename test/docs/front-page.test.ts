/**
 * The README is the front page: short enough to read before running anything, with the
 * two commands, the CLI, and a link to every page that holds what used to be in it. The longer
 * text lives in docs/, and every page there leads back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { linksIn } from './markdown-links.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');
const readme = read('README.md');

/** The pages whose ```sh blocks test/local/readme-examples.test.ts runs, line by line. */
const EXAMPLE_PAGES = ['README.md', 'docs/local-runs.md', 'docs/breach-reports.md'];

/** Every docs page the README must lead to: the top-level pages and the runbooks' index. */
const DOCS_PAGES = [
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  'docs/runbooks/README.md',
];

/** A shell line without its comment and with its spaces collapsed. */
const command = (line: string) =>
  line
    .replace(/\s+#.*$/, '')
    .replace(/\s+/g, ' ')
    .trim();

const shBlocks = (markdown: string) =>
  [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => (match[1] ?? '').split('\n'));

describe('README.md as a front page', () => {
  it('is under 200 lines', () => {
    expect(readme.split('\n').length).toBeLessThan(200);
  });

  it('opens with the two commands: install and run the demo, then every test (what .ci/run runs)', () => {
    expect(shBlocks(readme)[0]?.map(command).filter(Boolean)).toEqual(['npm ci && npm start', 'npm test']);
    expect(read('.ci/run')).toMatch(/^npm ci\nnpm test\n/m);
  });

  it('links every docs page', () => {
    const linked = new Set(linksIn(readme, 'README.md').map((link) => link.target.split('#')[0]));
    expect(DOCS_PAGES.filter((page) => !linked.has(page))).toEqual([]);
  });

  it('shows only npm start examples that test/local/readme-examples.test.ts runs', () => {
    const tested = new Set(EXAMPLE_PAGES.flatMap((page) => shBlocks(read(page)).flat().map(command)));
    const shown = [...readme.matchAll(/`(npm start[^`]*)`/g)].map((match) => command(match[1] ?? ''));
    expect(shown.length).toBeGreaterThanOrEqual(6);
    expect(shown.filter((example) => !tested.has(example))).toEqual([]);
  });
});

describe('docs pages', () => {
  // contracts.md and the runbooks were pages before the README was split, with openings of their own.
  const movedPages = DOCS_PAGES.filter(
    (page) => page !== 'docs/contracts.md' && page !== 'docs/runbooks/README.md',
  );

  it.each(movedPages)(
    '%s opens with a title and a sentence of what it covers, linking back to the README',
    (page) => {
      const [title, blank, intro = ''] = read(page).split('\n');
      expect(title).toMatch(/^# \S/);
      expect(blank).toBe('');
      expect(intro).toMatch(/^[A-Z`].*\./);
      expect(linksIn(intro, page).map((link) => link.target)).toContain('../README.md');
    },
  );
});
