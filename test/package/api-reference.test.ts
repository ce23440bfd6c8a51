/**
 * API.md, the API reference the package ships (jsii-docgen over the jsii assembly, written by
 * `npm run jsii`; test/package/jsii.test.ts holds it equal to what docgen writes today), documents
 * every prop of every props interface the construct's files declare, with its `@default`, and every
 * grant and metric method. Read from the sources here, so a prop added without regenerating fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SecurityPipelineBase } from '../../lib/construct/security-pipeline-base.ts';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { API_REFERENCE, JSII_SOURCES } from '../../scripts/jsii-build.ts';

const reference = readFileSync(join(REPO_ROOT, API_REFERENCE), 'utf8');
/** The assembly's name, which docgen's anchors carry. */
const ASSEMBLY = (JSON.parse(readFileSync(join(REPO_ROOT, 'jsii/package.json'), 'utf8')) as { name: string })
  .name;

interface DocumentedProp {
  readonly owner: string;
  readonly name: string;
  readonly defaultText: string | undefined;
}

/** Every property of every exported interface in the construct's jsii sources, with its `@default`. */
function constructProps(): DocumentedProp[] {
  return JSII_SOURCES.flatMap((name) => {
    const path = join(REPO_ROOT, 'lib/construct', `${name}.ts`);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    return source.statements.filter(ts.isInterfaceDeclaration).flatMap((declaration) =>
      declaration.members.filter(ts.isPropertySignature).map((member) => {
        const tag = ts.getJSDocTags(member).find((t) => t.tagName.text === 'default');
        const comment = typeof tag?.comment === 'string' ? tag.comment : undefined;
        return { owner: declaration.name.text, name: member.name.getText(source), defaultText: comment };
      }),
    );
  });
}

/** The reference's section of one struct property: from its heading to the next `---`. */
function sectionOf(owner: string, name: string): string {
  const anchor = `id="${ASSEMBLY}.${owner}.property.${name}"`;
  const start = reference.indexOf(anchor);
  if (start < 0) return '';
  return reference.slice(start, reference.indexOf('\n---', start));
}

describe('API.md', () => {
  const props = constructProps();

  it('documents every prop of every props interface, with its default', () => {
    expect(props.length).toBeGreaterThan(60);
    const missing = props.filter((prop) => sectionOf(prop.owner, prop.name) === '');
    expect(missing.map((prop) => `${prop.owner}.${prop.name}`)).toEqual([]);
    const wrongDefault = props.filter(
      (prop) =>
        prop.defaultText !== undefined &&
        // jsii drops the `- ` that marks a default described in words.
        !sectionOf(prop.owner, prop.name).includes(
          `*Default:* ${prop.defaultText.replace(/^- /, '').split('\n')[0]}`,
        ),
    );
    expect(wrongDefault.map((prop) => `${prop.owner}.${prop.name}: ${prop.defaultText}`)).toEqual([]);
  });

  it('documents every grant and metric method of the construct', () => {
    const methods = Object.getOwnPropertyNames(SecurityPipelineBase.prototype).filter(
      (m) => m !== 'constructor',
    );
    expect(methods.length).toBeGreaterThan(10);
    for (const method of methods)
      expect(reference, method).toContain(`id="${ASSEMBLY}.SecurityPipeline.${method}"`);
  });

  it("shows TypeScript imports from the package a TypeScript app installs, not the facade's", () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string };
    expect(reference).toContain(`import { SecurityPipeline } from '${manifest.name}'`);
    expect(reference).not.toContain(`from '${ASSEMBLY}'`);
  });

  it('is listed beside the docs it is shipped with', () => {
    expect(readdirSync(REPO_ROOT)).toContain(API_REFERENCE);
  });
});

/** The TSDoc a user reads of the construct: its class, its props interface, members and props. */
function constructDocs(): { where: string; text: string }[] {
  const docs: { where: string; text: string }[] = [];
  const collect = (file: string, keep: (node: ts.Node) => boolean) => {
    const path = join(REPO_ROOT, file);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (keep(node)) {
        for (const doc of ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)) {
          docs.push({
            where: `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`,
            text: doc.getText(source),
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  };
  const named = (node: ts.Node, names: readonly string[]) =>
    (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) && names.includes(node.name?.text ?? '');
  // The construct's own file: the class, its public members, the props interface as a whole.
  collect(
    'lib/security-pipeline.ts',
    (node) =>
      named(node, ['SecurityPipeline', 'SecurityPipelineProps']) ||
      (ts.isPropertyDeclaration(node) &&
        ts.isClassDeclaration(node.parent) &&
        node.parent.name?.text === 'SecurityPipeline'),
  );
  collect(
    'lib/construct/security-pipeline-base.ts',
    (node) => ts.isClassDeclaration(node) || ts.isMethodDeclaration(node),
  );
  for (const name of JSII_SOURCES) {
    collect(
      `lib/construct/${name}.ts`,
      (node) =>
        ts.isInterfaceDeclaration(node) ||
        ts.isPropertySignature(node) ||
        ts.isEnumDeclaration(node) ||
        ts.isEnumMember(node),
    );
  }
  return docs;
}

describe("the construct's TSDoc", () => {
  const docs = constructDocs();
  const index = readFileSync(join(REPO_ROOT, 'lib/index.ts'), 'utf8');
  const methods = new Set(Object.getOwnPropertyNames(SecurityPipelineBase.prototype));
  /** Scheduler expressions read like calls: `rate(1 day)`, `cron(…)`, `at(…)`. */
  const EXPRESSIONS = new Set(['rate', 'cron', 'at']);

  it('sends a user to no file of this repository: the package ships none of them', () => {
    expect(docs.length).toBeGreaterThan(80);
    const paths = docs.filter((doc) =>
      /\b(lib|lambdas|local|test|bin)\/[\w./-]*|\b[\w-]+\.ts\b/.test(doc.text),
    );
    expect(paths.map((doc) => `${doc.where}: ${doc.text.slice(0, 120)}`)).toEqual([]);
  });

  it('names as a call only what the package exports or the construct offers', () => {
    const calls = docs.flatMap((doc) =>
      [...doc.text.matchAll(/`(?<![.\w])([A-Za-z_]\w*)\(/g)].map((match) => ({
        where: doc.where,
        name: match[1] as string,
      })),
    );
    const unknown = calls.filter(
      (call) =>
        !EXPRESSIONS.has(call.name) &&
        !methods.has(call.name) &&
        !new RegExp(`\\b${call.name}\\b`).test(index),
    );
    expect(unknown.map((call) => `${call.where}: ${call.name}(`)).toEqual([]);
  });
});
