/**
 * `<out>/latest/index.html`: the run for a browser, self-contained (no script, nothing fetched),
 * a row per line of the list that agrees with summary.json, links that lead to the scans' files,
 * and the list's text escaped.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { startVendorSimulator, type VendorSimulator } from '../../local/simulator/index.ts';
import { runCli } from './cli-run.ts';

let dir: string;
let vendor: VendorSimulator;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-index-'));
  vendor = await startVendorSimulator({ pollsToFinish: 0, failingDomains: [/^fail/] });
});
afterEach(async () => {
  await vendor.close();
  await rm(dir, { recursive: true, force: true });
});

const UNESCAPE: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};
const text = (html: string) =>
  html.replace(/<[^>]+>/g, '').replace(/&(amp|lt|gt|quot|#39);/g, (entity) => UNESCAPE[entity] ?? entity);

describe('the run page', () => {
  it('has a row per line that agrees with summary.json, links to the files beside it, and fetches nothing', async () => {
    const list = join(dir, 'mixed.txt');
    await writeFile(list, 'ok.example.com\n<b>not a domain</b>\nfail.example.com\nOK.example.com\n');
    const out = join(dir, 'out');

    const run = await runCli(
      ['scan', '--domains-file', list, '--out', out, '--min-wait', '1', '--max-wait', '1'],
      {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: vendor.apiKey,
      },
    );

    expect(run).toExitWith(1);
    const folder = await realpath(join(out, 'latest'));
    expect(run.stdout).toContain(`Page:    ${folder}/index.html`);
    const html = await readFile(join(folder, 'index.html'), 'utf8');
    const summary = JSON.parse(await readFile(join(folder, 'summary.json'), 'utf8')) as ListSummary;
    // Self-contained: no script, nothing loaded from elsewhere, every link relative.
    expect(html).not.toMatch(/<script|\bsrc=|url\(|@import/i);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((match) => match[1] ?? '');
    for (const href of hrefs) expect(href).not.toMatch(/^[a-z][a-z0-9+.-]*:|^\//i);
    for (const href of hrefs) expect(existsSync(resolve(folder, decodeURIComponent(href))), href).toBe(true);
    // A row per line, in line order: what summary.json says of it.
    const rows = [...(html.split('<tbody>')[1] ?? '').matchAll(/<tr>(.*?)<\/tr>/g)].map((row) =>
      [...(row[1] ?? '').matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((cell) => text(cell[1] ?? '')),
    );
    const expected = [
      ...summary.domains.map((row) => [String(row.line), row.domain, row.state]),
      ...summary.invalid.map((row) => [String(row.line), row.text, 'invalid']),
    ].sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(rows.map((cells) => cells.slice(0, 3))).toEqual(expected);
    expect(expected.map((row) => row[2])).toEqual(['succeeded', 'invalid', 'failed', 'duplicate']);
    // The list's own text is shown, never taken as markup.
    expect(html).toContain('&lt;b&gt;not a domain&lt;/b&gt;');
    const ok = rows.find((cells) => cells[1] === 'ok.example.com') ?? [];
    expect(ok[3]).toMatch(/^\d+ s$/);
    expect(ok[4]).toMatch(/^report .+, logs .+, debug .+$/);
    expect(hrefs.filter((href) => href.endsWith('/manifest.json'))).toHaveLength(1);
  });
});
