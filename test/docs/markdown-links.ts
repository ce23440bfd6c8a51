/**
 * Relative links in Markdown pages, and the anchors their targets offer, as GitHub renders them.
 * A small reader rather than a Markdown library: the checks need only inline links, reference
 * definitions, ATX headings and HTML ids, with code blocks and code spans left out.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface MarkdownLink {
  /** The page the link is in, relative to the root given to `brokenLinks`. */
  readonly page: string;
  /** 1-based line of the link in that page. */
  readonly line: number;
  /** The target as written, e.g. `docs/runbooks/alarms.md#alarms` or `#cost-notes`. */
  readonly target: string;
}

export interface BrokenLink extends MarkdownLink {
  readonly problem: string;
}

/** The page's lines with fenced code blocks blanked, so their contents are neither links nor headings. */
function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      // A fence closes on a bare run of its own character, at least as long as the opening one.
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker)
        fence = undefined;
      return '';
    }
    if (marker) {
      fence = marker;
      return '';
    }
    return line;
  });
}

/** A line without its code spans (a link written inside backticks is an example, not a link). */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[\s\S]*?\1/g, '');
}

const INLINE_LINK = /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/;

/** Every link target in a page, with its line. */
export function linksIn(markdown: string, page: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseLines(markdown).forEach((raw, index) => {
    const line = withoutCodeSpans(raw);
    const definition = REFERENCE_DEFINITION.exec(line)?.[1];
    const targets = definition
      ? [definition]
      : [...line.matchAll(INLINE_LINK)].map((match) => match[1] ?? '');
    for (const target of targets) links.push({ page, line: index + 1, target: target.replace(/^<|>$/g, '') });
  });
  return links;
}

/**
 * GitHub's anchor for a heading: the rendered text in lower case, punctuation other than `-` and
 * `_` removed, spaces turned into `-`; a repeated anchor gets `-1`, `-2`, ...
 */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' and any HTML `id`/`name`. */
export function anchorsIn(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<[a-z][^>]*\s(?:id|name)="([^"]+)"/gi))
      anchors.add(match[1] as string);
  }
  return anchors;
}

/** Every `.md` file under `dir`, recursively, as absolute paths. */
export function markdownFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFilesUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/**
 * The relative links among `pages` (absolute paths) whose file or anchor does not exist. Links
 * with a scheme (`https:`, `mailto:`) are not followed; a link to a folder needs only the folder.
 */
export function brokenLinks(root: string, pages: readonly string[]): BrokenLink[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOf = (file: string) => {
    const cached = anchorCache.get(file);
    if (cached) return cached;
    const anchors = anchorsIn(readFileSync(file, 'utf8'));
    anchorCache.set(file, anchors);
    return anchors;
  };
  const broken: BrokenLink[] = [];
  for (const pagePath of pages) {
    const page = relative(root, pagePath);
    for (const link of linksIn(readFileSync(pagePath, 'utf8'), page)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
      const [pathPart = '', anchor] = link.target.split('#', 2) as [string, string | undefined];
      const file = pathPart === '' ? pagePath : resolve(dirname(pagePath), decodeURIComponent(pathPart));
      if (!existsSync(file)) {
        broken.push({ ...link, problem: `no file ${relative(root, file)}` });
        continue;
      }
      if (anchor === undefined || anchor === '' || statSync(file).isDirectory()) continue;
      if (!file.endsWith('.md')) continue;
      if (!anchorsOf(file).has(decodeURIComponent(anchor)))
        broken.push({ ...link, problem: `no heading #${anchor} in ${relative(root, file)}` });
    }
  }
  return broken;
}
