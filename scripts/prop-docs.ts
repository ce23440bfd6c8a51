/**
 * What the construct's props say of each setting: the TSDoc (meaning and `@default`) of
 * lib/construct/'s props interfaces, read from the sources and keyed by the configuration file's
 * path of the setting (`poll.minWaitSeconds` is the prop `poll.minWait`). One text for each
 * setting: the editor shows it on the prop, and the configuration's JSON Schema carries it as the
 * setting's description (scripts/config-schema.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { PROP_NAMES } from '../lib/construct/props-to-config.ts';
import { REPO_ROOT } from '../lib/platform/pipeline-function.ts';
import { JSII_SOURCES } from './jsii-build.ts';

export interface PropDoc {
  /** The prop's path from the settings (`poll.minWait`, `schedules[].schedule`). */
  readonly prop: string;
  /** The TSDoc's text without its tags, on one line. */
  readonly description: string;
  /** The `@default` tag's text, if any. */
  readonly defaultText: string | undefined;
}

interface Member {
  readonly doc: Omit<PropDoc, 'prop'>;
  /** The props interface the member's type names (itself, as an array's element or a map's value). */
  readonly child: string | undefined;
  /** How the configuration nests the child: an object, an array's items or a map's values. */
  readonly nesting: '' | '[]' | '{}';
}

/** The settings' props interfaces, each member with its TSDoc and the interface it leads to. */
function propsInterfaces(): Map<string, Map<string, Member>> {
  const declarations = new Map<string, { node: ts.InterfaceDeclaration; source: ts.SourceFile }>();
  for (const name of JSII_SOURCES) {
    const path = join(REPO_ROOT, 'lib/construct', `${name}.ts`);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const node of source.statements.filter(ts.isInterfaceDeclaration))
      declarations.set(node.name.text, { node, source });
  }
  const membersOf = (name: string): Map<string, Member> => {
    const found = declarations.get(name);
    if (found === undefined) return new Map();
    const { node, source } = found;
    const inherited = (node.heritageClauses ?? []).flatMap((clause) =>
      clause.types.flatMap((base) => [...membersOf(base.expression.getText(source))]),
    );
    const own = node.members.filter(ts.isPropertySignature).map((member): [string, Member] => {
      const [child, nesting] = childOf(member.type, source);
      return [member.name.getText(source), { doc: docOf(member), child, nesting }];
    });
    return new Map([...inherited, ...own]);
  };
  return new Map([...declarations.keys()].map((name) => [name, membersOf(name)]));
}

function childOf(
  type: ts.TypeNode | undefined,
  source: ts.SourceFile,
): [string | undefined, Member['nesting']] {
  if (type === undefined) return [undefined, ''];
  if (ts.isArrayTypeNode(type)) return [childOf(type.elementType, source)[0], '[]'];
  if (ts.isTypeLiteralNode(type)) {
    const index = type.members.find(ts.isIndexSignatureDeclaration);
    return [index === undefined ? undefined : childOf(index.type, source)[0], '{}'];
  }
  if (ts.isTypeReferenceNode(type)) return [type.typeName.getText(source), ''];
  return [undefined, ''];
}

function docOf(member: ts.PropertySignature): Omit<PropDoc, 'prop'> {
  const doc = ts.getJSDocCommentsAndTags(member).find(ts.isJSDoc);
  const text = (comment: string | ts.NodeArray<ts.JSDocComment> | undefined) =>
    (typeof comment === 'string' ? comment : (ts.getTextOfJSDocComment(comment) ?? ''))
      .replace(/\s+/g, ' ')
      .trim();
  const defaultTag = doc?.tags?.find((tag) => tag.tagName.text === 'default');
  return {
    description: text(doc?.comment),
    defaultText: defaultTag === undefined ? undefined : text(defaultTag.comment),
  };
}

/** A JSON Schema node, as zod writes one: objects, arrays, maps and alternatives. */
export interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  anyOf?: SchemaNode[];
  description?: string;
  default?: unknown;
  [key: string]: unknown;
}

/**
 * Every setting of `schema` (the configuration's JSON Schema) that a prop documents, by its path
 * (`poll.minWaitSeconds`, a list's items as `schedules[].name`, a map's values as
 * `domainLists{}.objectKey`), with the prop's TSDoc. A setting is its prop's name, or the name
 * PROP_NAMES gives the prop (`minWaitSeconds` is `minWait`, a schedule's `expression` its `schedule`).
 */
export function settingDocs(schema: SchemaNode): Map<string, PropDoc & { readonly node: SchemaNode }> {
  const interfaces = propsInterfaces();
  const docs = new Map<string, PropDoc & { readonly node: SchemaNode }>();
  const walk = (node: SchemaNode, name: string, settingPath: string, propPath: string) => {
    const members = interfaces.get(name) ?? new Map<string, Member>();
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      const renamed = PROP_NAMES[key]?.prop;
      const prop = renamed !== undefined && members.has(renamed) ? renamed : key;
      const member = members.get(prop);
      if (member === undefined) continue;
      const setting = `${settingPath}${key}`;
      const propAt = `${propPath}${prop}`;
      docs.set(setting, { prop: propAt, ...member.doc, node: child });
      if (member.child === undefined) continue;
      const nested =
        member.nesting === '[]'
          ? child.items
          : member.nesting === '{}' && typeof child.additionalProperties === 'object'
            ? child.additionalProperties
            : child;
      for (const alternative of nested?.anyOf ?? (nested === undefined ? [] : [nested]))
        walk(alternative, member.child, `${setting}${member.nesting}.`, `${propAt}${member.nesting}.`);
    }
  };
  walk(schema, 'SecurityPipelineSettingsProps', '', '');
  return docs;
}
