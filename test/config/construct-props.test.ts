/**
 * SecurityPipeline's props as people read them (lib/construct/): every prop documented, every
 * optional one with a `@default` that is what the configuration's schema does when it is left out,
 * one prop for each setting of the configuration file and none besides, and a configuration file
 * mapped onto the props giving the same configuration back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fc, test as property } from '@fast-check/vitest';
import { Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PipelineConfigError } from '../../lib/config/errors.ts';
import { pipelineConfigJsonSchema } from '../../lib/config/json-schema.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { LOG_RETENTION_DAYS } from '../../lib/config/schema.ts';
import { pipelinePropsFromConfig } from '../../lib/construct/config-to-props.ts';
import { type SecurityPipelineSettingsProps, VendorKeyStorage } from '../../lib/construct/props.ts';
import { PROP_NAMES, pipelineConfigFromProps } from '../../lib/construct/props-to-config.ts';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';

const PROP_FILES = [
  'lib/construct/props.ts',
  'lib/construct/scan-props.ts',
  'lib/construct/schedule-props.ts',
  'lib/construct/breach-props.ts',
  'lib/construct/resource-props.ts',
];

interface PropDoc {
  readonly name: string;
  readonly optional: boolean;
  readonly doc: string;
  /** The `@default` tag's text, or undefined when there is none. */
  readonly defaultText: string | undefined;
  /** The interface it holds (`X`, `X[]` or `{ [name: string]: X }`), when it is one of ours. */
  readonly nested?: { readonly interfaceName: string; readonly container: 'object' | 'array' | 'map' };
}

/** Every interface of the prop files with its members, inherited ones included. */
function readInterfaces(): Map<string, PropDoc[]> {
  const declarations = new Map<string, ts.InterfaceDeclaration>();
  for (const file of PROP_FILES) {
    const source = ts.createSourceFile(
      file,
      readFileSync(join(REPO_ROOT, file), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    source.forEachChild((node) => {
      const exported = ts.getCombinedModifierFlags(node as ts.Declaration) & ts.ModifierFlags.Export;
      if (ts.isInterfaceDeclaration(node) && exported) declarations.set(node.name.text, node);
    });
  }
  const nestedOf = (type: ts.TypeNode | undefined): PropDoc['nested'] => {
    if (type === undefined) return undefined;
    if (ts.isTypeReferenceNode(type) && declarations.has(type.typeName.getText()))
      return { interfaceName: type.typeName.getText(), container: 'object' };
    if (ts.isArrayTypeNode(type) && declarations.has(type.elementType.getText()))
      return { interfaceName: type.elementType.getText(), container: 'array' };
    if (ts.isTypeLiteralNode(type)) {
      const index = type.members.find(ts.isIndexSignatureDeclaration);
      if (index && declarations.has(index.type.getText()))
        return { interfaceName: index.type.getText(), container: 'map' };
    }
    return undefined;
  };
  const membersOf = (name: string): PropDoc[] => {
    const declaration = declarations.get(name);
    if (declaration === undefined) return [];
    const inherited = (declaration.heritageClauses ?? []).flatMap((clause) =>
      clause.types.flatMap((type) => membersOf(type.expression.getText())),
    );
    const own = declaration.members.filter(ts.isPropertySignature).map((member): PropDoc => {
      const tags = ts.getJSDocTags(member);
      const defaultTag = tags.find((tag) => tag.tagName.text === 'default');
      const nested = nestedOf(member.type);
      return {
        name: member.name.getText(),
        optional: member.questionToken !== undefined,
        doc: ts.getTextOfJSDocComment(ts.getJSDocCommentsAndTags(member).find(ts.isJSDoc)?.comment) ?? '',
        defaultText: defaultTag ? (ts.getTextOfJSDocComment(defaultTag.comment) ?? '').trim() : undefined,
        ...(nested ? { nested } : {}),
      };
    });
    return [...inherited, ...own];
  };
  return new Map([...declarations.keys()].map((name) => [name, membersOf(name)]));
}

const INTERFACES = readInterfaces();

interface Leaf extends PropDoc {
  /** `poll.minWait`, `schedules[].flexibleWindow`. */
  readonly path: string;
}

function leavesOf(interfaceName: string, prefix = ''): Leaf[] {
  return (INTERFACES.get(interfaceName) ?? []).flatMap((prop): Leaf[] => {
    const path = `${prefix}${prop.name}`;
    if (prop.nested === undefined) return [{ ...prop, path }];
    const marker = { object: '', array: '[]', map: '{}' }[prop.nested.container];
    return [{ ...prop, path }, ...leavesOf(prop.nested.interfaceName, `${path}${marker}.`)];
  });
}

const SETTINGS = leavesOf('SecurityPipelineSettingsProps');

/** A documented default as the value it names (`Duration.seconds(60)`, `'incoming/'`, `[]`). */
function evaluateDefault(text: string): unknown {
  const scope = { Duration, Size, Schedule, RetentionDays, RemovalPolicy, VendorKeyStorage, Runtime };
  const evaluate = (expression: string) =>
    new Function(...Object.keys(scope), `return (${expression});`)(...Object.values(scope));
  try {
    return evaluate(text);
  } catch {
    // `'https://vendor.example.com' (a placeholder: …)`: the value, then what it means.
    return evaluate(text.slice(0, text.indexOf(' (')));
  }
}

/** One entry for each array of objects the defaults are tried inside, with what it requires. */
const ARRAY_ENTRIES: Record<string, Record<string, unknown>> = {
  schedules: { name: 'nightly', schedule: Schedule.expression('rate(1 day)'), domains: ['example.com'] },
  'breach.schedules': {
    name: 'weekly',
    schedule: Schedule.expression('rate(7 days)'),
    watchlistKey: 'watchlists/team.csv',
  },
  'rotation.mirrorSecrets': {
    secretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:mirror-AbCdEf',
  },
};

/** Props with `value` at `path`, inside the one entry its arrays hold. */
function propsWith(path: string, value?: unknown): SecurityPipelineSettingsProps {
  const build = (segments: string[], at: string): Record<string, unknown> => {
    const [head = '', ...rest] = segments;
    const key = head.replace(/\[\]$/, '');
    const here = at === '' ? key : `${at}.${key}`;
    if (head.endsWith('[]')) {
      const entry = { ...ARRAY_ENTRIES[here], ...(rest.length > 0 ? build(rest, here) : {}) };
      return { [key]: [entry] };
    }
    return { [key]: rest.length === 0 ? value : build(rest, here) };
  };
  const segments = path.split('.');
  if (value === undefined) {
    // The same props without the leaf: the arrays on its path still hold their one entry.
    const parents = segments.slice(0, -1);
    return parents.length === 0 ? {} : (build(parents, '') as SecurityPipelineSettingsProps);
  }
  return build(segments, '') as SecurityPipelineSettingsProps;
}

describe('SecurityPipeline props, written for people', () => {
  it('documents every prop of every props interface, and gives every optional one a @default', () => {
    const undocumented = [...INTERFACES].flatMap(([name, props]) =>
      props.filter((prop) => prop.doc.trim().length === 0).map((prop) => `${name}.${prop.name}`),
    );
    const noDefault = [...INTERFACES].flatMap(([name, props]) =>
      props
        .filter((prop) => prop.optional && prop.defaultText === undefined)
        .map((prop) => `${name}.${prop.name}`),
    );
    expect(undocumented).toEqual([]);
    expect(noDefault).toEqual([]);
  });

  const literal = SETTINGS.filter(
    (leaf) => leaf.defaultText !== undefined && !leaf.defaultText.startsWith('-'),
  );

  it.each(literal.map((leaf) => [leaf.path, leaf.defaultText] as const))(
    'sets %s to its documented default %s and gets the configuration it gets without it',
    (path, defaultText) => {
      const value = evaluateDefault(defaultText ?? '');
      const source = `default of ${path}`;
      expect(pipelineConfigFromProps(propsWith(path, value), source)).toEqual(
        pipelineConfigFromProps(propsWith(path), source),
      );
    },
  );

  it('states a value (not "-") for every setting whose schema has a default, and names one prop per setting', () => {
    const settings = jsonSchemaSettings(pipelineConfigJsonSchema(), '');
    const propOf = (setting: string) => setting.replace(/[A-Za-z]+/g, (key) => PROP_NAMES[key]?.prop ?? key);
    const byPath = new Map(SETTINGS.map((leaf) => [leaf.path, leaf]));
    const missing = settings.filter(({ path }) => !byPath.has(propOf(path))).map(({ path }) => path);
    const undocumented = settings
      .filter(({ hasDefault, path }) => {
        const leaf = byPath.get(propOf(path));
        // A section's default is its settings' defaults, each documented on its own prop.
        return hasDefault && leaf?.nested === undefined && (leaf?.defaultText ?? '-').startsWith('-');
      })
      .map(({ path }) => path);
    const settingProps = new Set(settings.map(({ path }) => propOf(path)));
    const extra = SETTINGS.filter((leaf) => !settingProps.has(leaf.path)).map((leaf) => leaf.path);
    expect({ missing, undocumented, extra }).toEqual({ missing: [], undocumented: [], extra: [] });
  });
});

describe('docs/configuration.md', () => {
  it('lists every setting whose prop has another name or a CDK type, with that prop', () => {
    const docs = readFileSync(join(REPO_ROOT, 'docs/configuration.md'), 'utf8');
    const section = docs.slice(docs.indexOf('## As construct props'));
    const missing = Object.entries(PROP_NAMES).filter(
      ([setting, { prop }]) => !section.includes(setting) || !section.includes(prop),
    );
    expect(missing).toEqual([]);
  });
});

/** The configuration file's settings from its JSON Schema, each with whether the schema defaults it. */
function jsonSchemaSettings(schema: unknown, prefix: string): { path: string; hasDefault: boolean }[] {
  const node = schema as {
    properties?: Record<string, unknown>;
    items?: unknown;
    additionalProperties?: unknown;
    anyOf?: unknown[];
  };
  return Object.entries(node.properties ?? {}).flatMap(([key, value]) => {
    // The configuration's own keys (the stack is the app's, `$schema` the editor's), and the earlier
    // string-only form of mirrorSecrets, which the props leave out.
    if (prefix === '' && (key === 'stack' || key === '$schema')) return [];
    if (key === 'mirrorSecretArns') return [];
    const path = `${prefix}${key}`;
    const child = value as typeof node & { default?: unknown };
    const own = { path, hasDefault: child.default !== undefined };
    const objectOf = (candidate: unknown) =>
      [candidate, ...((candidate as typeof node)?.anyOf ?? [])].find(
        (variant) => (variant as typeof node)?.properties !== undefined,
      );
    const item = objectOf(child.items);
    if (item) return [own, ...jsonSchemaSettings(item, `${path}[].`)];
    const entry = objectOf(child.additionalProperties);
    if (entry) return [own, ...jsonSchemaSettings(entry, `${path}{}.`)];
    if (child.properties) return [own, ...jsonSchemaSettings(child, `${path}.`)];
    return [own];
  });
}

describe('props in CDK types', () => {
  const problems = (props: SecurityPipelineSettingsProps) => {
    try {
      pipelineConfigFromProps(props, 'test props');
    } catch (error) {
      if (error instanceof PipelineConfigError) return error.issues;
      throw error;
    }
    return [];
  };

  it('names the prop and its unit when a Duration, Size or Schedule is wrong', () => {
    expect(problems({ poll: { maxWait: Duration.hours(2) } })).toContainEqual({
      setting: 'props.poll.maxWait (in seconds)',
      problem: expect.stringContaining('must be between 1 and 3600 (got 7200)'),
    });
    expect(problems({ rotation: { window: Duration.minutes(90) } })).toEqual([
      {
        setting: 'props.rotation.window',
        problem: 'must be a whole number of hours (got 1 hour 30 minutes)',
      },
    ]);
    expect(
      problems({ breach: { maxArchiveSize: Size.kibibytes(10) }, alarms: { quietPeriod: Duration.days(8) } }),
    ).toEqual([
      { setting: 'props.breach.maxArchiveSize (in bytes)', problem: expect.stringContaining('(got 10240)') },
      { setting: 'props.alarms.quietPeriod (in days)', problem: expect.stringContaining('(got 8)') },
    ]);
    // What a JavaScript user may pass where the types say otherwise.
    const untyped = { poll: { minWait: 60 }, rotation: { schedule: 'rate(30 days)' } } as unknown;
    expect(problems(untyped as SecurityPipelineSettingsProps)).toEqual([
      { setting: 'props.poll.minWait', problem: 'must be a Duration (got 60)' },
      { setting: 'props.rotation.schedule', problem: "must be a Schedule (got 'rate(30 days)')" },
    ]);
  });

  it("refuses a key that is no prop, such as a configuration file's name for one, naming the props", () => {
    const fileShaped = { poll: { minWaitSeconds: 5 }, logRetentionDays: 30 } as unknown;
    expect(problems(fileShaped as SecurityPipelineSettingsProps)).toEqual([
      {
        setting: 'props.poll.minWaitSeconds',
        problem: 'is not a prop here (the props are minWait, maxWait, growthFactor, deadline)',
      },
      { setting: 'props.logRetentionDays', problem: expect.stringContaining('is not a prop here') },
    ]);
  });

  it('takes every RemovalPolicy a bucket and a log group can have, and refuses SNAPSHOT saying why', () => {
    const policyOf = (removalPolicy: RemovalPolicy) =>
      pipelineConfigFromProps({ removalPolicy }, 'test props').removalPolicy;
    expect(policyOf(RemovalPolicy.DESTROY)).toBe('destroy');
    expect(policyOf(RemovalPolicy.RETAIN)).toBe('retain');
    expect(policyOf(RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE)).toBe('retain');
    expect(problems({ removalPolicy: RemovalPolicy.SNAPSHOT })).toEqual([
      { setting: 'props.removalPolicy', problem: expect.stringContaining('have no snapshots') },
    ]);
  });

  it('names a schedule inside an array by its index and prop name', () => {
    const schedule = {
      name: 'nightly',
      schedule: Schedule.expression('rate(1 day)'),
      domains: ['example.com'],
    };
    expect(problems({ schedules: [{ ...schedule, flexibleWindow: Duration.seconds(30) }] })).toEqual([
      {
        setting: 'props.schedules[0].flexibleWindow',
        problem: 'must be a whole number of minutes (got 30 seconds)',
      },
    ]);
  });
});

describe('a configuration file mapped onto the props', () => {
  const sizes = (bounds: { min: number; max: number }) => fc.integer(bounds);
  const configInput = fc.record(
    {
      scan: fc.record({
        maxConcurrency: fc.integer({ min: 1, max: 1000 }),
        maxOutputBytes: sizes({ min: 2 ** 20, max: 5 * 2 ** 30 }),
      }),
      intake: fc.record({ maxListBytes: sizes({ min: 1024, max: 100 * 2 ** 20 }) }),
      breach: fc.record({
        maxWatchlistBytes: sizes({ min: 1024, max: 100 * 2 ** 20 }),
        maxInlineValueBytes: sizes({ min: 256, max: 32 * 1024 }),
        reconcileSchedule: fc.constantFrom('rate(1 day)', 'rate(6 hours)', 'cron(0 3 * * ? *)'),
      }),
      alarms: fc.record({ quietDays: fc.integer({ min: 1, max: 7 }) }),
      rotation: fc.record({
        windowHours: fc.integer({ min: 1, max: 24 }),
        keyPropagationSeconds: fc.integer({ min: 0, max: 480 }),
        maxKeyAgeDays: fc.integer({ min: 31, max: 1100 }),
      }),
      schedules: fc.array(
        fc.record({
          flexibleWindowMinutes: fc.integer({ min: 0, max: 1440 }),
          maxEventAgeSeconds: fc.integer({ min: 60, max: 86_400 }),
          enabled: fc.boolean(),
        }),
        { maxLength: 3 },
      ),
      logRetentionDays: fc.constantFrom(...LOG_RETENTION_DAYS),
      removalPolicy: fc.constantFrom('retain', 'destroy'),
    },
    { requiredKeys: [] },
  );

  property.prop([configInput], { seed: 46, numRuns: 60 })(
    'gives the configuration back when the construct validates the props again',
    (raw) => {
      const input = {
        ...raw,
        schedules: raw.schedules?.map((timing, index) => ({
          ...timing,
          name: `run-${index}`,
          expression: 'rate(1 day)',
          domains: ['example.com'],
        })),
      };
      const { stack: _stack, ...config } = parsePipelineConfig(input, 'generated');
      const { stack: _again, ...again } = pipelineConfigFromProps(
        pipelinePropsFromConfig({ ...config, stack: _stack }),
        'props',
      );
      expect(again).toEqual(config);
    },
  );
});
