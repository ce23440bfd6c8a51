/**
 * One text per setting: the construct prop's TSDoc is the JSON Schema's description of the
 * configuration file's setting (npm run config-schema writes it), and docs/configuration.md's table
 * names only settings the schema knows, every documented one of them, with the schema's default.
 * A prop's TSDoc `@default` is held to what the schema does by test/config/construct-props.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_SCHEMA_FILE } from '../../lib/config/json-schema.ts';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { type SchemaNode, settingDocs } from '../../scripts/prop-docs.ts';

const schema = JSON.parse(readFileSync(join(REPO_ROOT, CONFIG_SCHEMA_FILE), 'utf8')) as SchemaNode;
const docs = settingDocs(schema);
const page = readFileSync(join(REPO_ROOT, 'docs/configuration.md'), 'utf8');

/** The first table's rows: the settings each names (`a.b`, `a.b`, `c`) and its default cell. */
function documentedRows(): { settings: string[]; defaultCell: string }[] {
  const table = page.slice(
    page.indexOf('| setting | default | rules |'),
    page.indexOf('\n\n', page.indexOf('| setting | default | rules |')),
  );
  return table
    .split('\n')
    .slice(2)
    .map((row) => row.split(' | '))
    .map(([settings = '', defaultCell = '']) => {
      const names = [...settings.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);
      // `stack.account`, `stack.region`: a later name without its section takes the first one's.
      const section = names[0]?.includes('.') ? names[0].replace(/\.[^.]*$/, '.') : '';
      return {
        settings: names.map((name) => (name.includes('.') || section === '' ? name : `${section}${name}`)),
        defaultCell: defaultCell.trim(),
      };
    });
}

/** The schema node of a setting path (`schedules[]` is each item; `domainLists.<name>` a value). */
function nodeAt(path: string): SchemaNode | undefined {
  let node: SchemaNode | undefined = schema;
  for (const part of path.replace(/\.<name>/, '').split('.')) {
    const list = part.endsWith('[]');
    node = node?.properties?.[part.replace(/\[\]$/, '')];
    if (list) node = node?.items;
  }
  return node;
}

/** A default cell as the schema's value, where the cell states one (a number, a `literal`, JSON). */
function cellValue(cell: string): unknown {
  const literal = /^`([^`]*)`/.exec(cell)?.[1] ?? /^(\[[^\]]*\]|true|false|[\d.]+)(?=\s|$)/.exec(cell)?.[1];
  if (literal === undefined) return undefined;
  try {
    return JSON.parse(literal);
  } catch {
    return literal;
  }
}

describe("each setting's text", () => {
  it("is its prop's TSDoc in the JSON Schema, for every setting a prop documents", () => {
    expect(docs.size).toBeGreaterThan(90);
    const differing = [...docs].filter(
      ([, doc]) => doc.description === '' || !doc.node.description?.startsWith(doc.description),
    );
    expect(differing.map(([setting]) => setting)).toEqual([]);
  });

  it('in docs/configuration.md names settings the schema knows, with the default the schema applies', () => {
    const rows = documentedRows();
    expect(rows.length).toBeGreaterThan(50);
    const unknown = rows.flatMap((row) => row.settings).filter((setting) => nodeAt(setting) === undefined);
    expect(unknown).toEqual([]);
    const wrongDefaults = rows.flatMap((row) =>
      row.settings.flatMap((setting) => {
        const schemaDefault = nodeAt(setting)?.default;
        const stated = cellValue(row.defaultCell);
        if (schemaDefault === undefined || stated === undefined || typeof schemaDefault === 'object')
          return [];
        return stated === schemaDefault
          ? []
          : [`${setting}: docs ${JSON.stringify(stated)}, schema ${JSON.stringify(schemaDefault)}`];
      }),
    );
    expect(wrongDefaults).toEqual([]);
  });

  it('in docs/configuration.md covers every setting a prop documents', () => {
    const plain = (setting: string) => setting.replace(/\.<name>$/, '').replace(/\[\]|\{\}/g, '');
    const documented = new Set(documentedRows().flatMap((row) => row.settings.map(plain)));
    // Covered by its own row, a row of what holds it (a schedule's fields, a vocabulary's words),
    // or the rows of what it holds (a section).
    const covered = (setting: string) =>
      [...documented].some(
        (row) => row === setting || setting.startsWith(`${row}.`) || row.startsWith(`${setting}.`),
      );
    expect([...docs.keys()].map(plain).filter((setting) => !covered(setting))).toEqual([]);
  });
});
