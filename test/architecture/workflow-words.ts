/**
 * Finds workflow names in source code, for the layout rule "the platform names no workflow".
 *
 * What counts: every identifier and every string or template literal of the file's syntax tree
 * (so import specifiers such as `#lambdas/scan/…` too), and the file's path, split into words at
 * camelCase, snake_case, kebab-case, dots and slashes. Comments are not code: they may give a
 * workflow as an example of why the code is as it is, and no build or runtime reads them.
 *
 * The words are the workflows' folder and dimension names with their plurals: `scans/` is the scan
 * workflow's S3 folder, `domainList` is domain-list. `list` alone (the domain-list workflow's
 * registered name) is left out: it is also the S3 action word (ListBucket) and a plain noun.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const SINGLE_WORDS: ReadonlySet<string> = new Set([
  'scan',
  'scans',
  'breach',
  'breaches',
  'watchlist',
  'watchlists',
  'rotation',
  'rotations',
  'reconciliation',
  'reconciliations',
  'operations',
]);

/** The lower-case words of an identifier, literal or path: `scanApiUrl` → scan, api, url. */
export function wordsOf(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** The workflow words in one piece of text, in order (`domain-list` as one word). */
export function workflowWordsIn(text: string): string[] {
  const words = wordsOf(text);
  const found: string[] = [];
  words.forEach((word, i) => {
    if (SINGLE_WORDS.has(word)) found.push(word);
    if (word === 'domain' && (words[i + 1] === 'list' || words[i + 1] === 'lists')) found.push('domain-list');
  });
  return found;
}

/** Each workflow word in a file's code (identifiers and literals, not comments), with its count. */
export function workflowWordsInCode(root: string, file: string): Record<string, number> {
  const source = ts.createSourceFile(
    file,
    readFileSync(join(root, file), 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const counts: Record<string, number> = {};
  const visit = (node: ts.Node): void => {
    if (
      ts.isIdentifier(node) ||
      ts.isPrivateIdentifier(node) ||
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      for (const word of workflowWordsIn(node.text)) counts[word] = (counts[word] ?? 0) + 1;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return counts;
}
