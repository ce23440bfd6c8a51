/**
 * Every EventBridge rule of the stack, judged as EventBridge judges it: real S3 "Object Created"
 * events for each documented upload and for near misses go through every rule's synthesized
 * pattern (test/kit/event-pattern.ts, the documented matching semantics), and a matched upload
 * through the start function the rule targets, built from its synthesized environment. An upload
 * starts a run only when both say so.
 *
 * The documented behaviour (README, docs/runbooks/on-demand-runs.md): `incoming/*.txt|csv` starts
 * a domain-list run and `watchlists/*.csv|json` a watchlist run, the suffix in any letter case;
 * nothing else starts anything. And every pattern stays cheap for EventBridge's matcher: no field
 * holds more than two wildcards (AWS refuses "too complex" rules only at deploy).
 */
import { readFileSync } from 'node:fs';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Rule } from 'aws-cdk-lib/aws-events';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { intakeDepsFromEnvironment } from '#lambdas/domain-list/deps';
import { type IntakeDeps, startRuns } from '#lambdas/platform/runs/intake';
import { pauseSwitch } from '#lambdas/platform/runs/pause';
import { createObservability } from '#lambdas/platform/runtime/observability';
import { watchlistIntakeDepsFromEnvironment } from '#lambdas/watchlist/deps';
import type { PipelineConfigInput } from '../../lib/config/schema.ts';
import {
  MAX_WILDCARDS_PER_FIELD,
  wildcardsPerField,
} from '../../lib/platform/rules/event-pattern-wildcards.ts';
import { PipelineChecks } from '../../lib/platform/rules/pipeline-checks.ts';
import { matchesEventPattern } from '../kit/event-pattern.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { objectCreatedEvent } from '../kit/s3-events.ts';
import { functionFor, type Synthesized, synth } from '../kit/synth.ts';
import { testOutdir } from '../kit/synth-outdir.ts';

const example = JSON.parse(
  readFileSync(new URL('../../config/pipeline.example.json', import.meta.url), 'utf8'),
) as PipelineConfigInput;

type Json = Record<string, unknown>;

/** Every `{ Ref: X }` becomes the string `X`: a bucket's name and an ARN are then plain values. */
function resolveRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolveRefs);
  if (value !== null && typeof value === 'object') {
    const record = value as Json;
    if (typeof record.Ref === 'string' && Object.keys(record).length === 1) return record.Ref;
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, resolveRefs(v)]));
  }
  return value;
}

interface RuleModel {
  readonly id: string;
  readonly pattern: Record<string, never>;
  /** Logical IDs of the functions it targets. */
  readonly functionTargets: readonly string[];
}

function rulesOf(synthesized: Synthesized): RuleModel[] {
  return Object.entries(synthesized.json.Resources)
    .filter(([, r]) => r.Type === 'AWS::Events::Rule' && r.Properties?.EventPattern !== undefined)
    .map(([id, r]) => ({
      id,
      pattern: resolveRefs(r.Properties?.EventPattern) as Record<string, never>,
      functionTargets: ((r.Properties?.Targets as { Arn?: unknown }[] | undefined) ?? []).flatMap((t) => {
        const getAtt = (t.Arn as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'];
        return getAtt ? [getAtt[0]] : [];
      }),
    }));
}

const sfnMock = mockClient(SFNClient);
afterAll(() => sfnMock.restore());

describe('upload rules, fed real S3 events', () => {
  let synthesized: Synthesized;
  let inputBucket: string;
  /** The intake functions by logical ID, each built from its synthesized environment. */
  let intakes: Map<string, { kind: 'domain list' | 'watchlist'; deps: IntakeDeps }>;

  beforeAll(() => {
    synthesized = synth(example);
    inputBucket = Object.entries(synthesized.json.Resources).find(
      ([id, r]) => r.Type === 'AWS::S3::Bucket' && id.startsWith('StorageInput'),
    )?.[0] as string;
    intakes = new Map();
    for (const [handler, kind] of [
      ['start-domain-list', 'domain list'],
      ['start-watchlist', 'watchlist'],
    ] as const) {
      const fn = functionFor(synthesized, handler);
      const env = resolveRefs(fn.environment) as Record<string, string>;
      const tools = createObservability(env, 'intake');
      const deps =
        kind === 'domain list'
          ? intakeDepsFromEnvironment(env, tools)
          : watchlistIntakeDepsFromEnvironment(env, tools);
      // The pause switch reads SSM, which has no local stand-in: the pipeline is running.
      const pause = pauseSwitch(String(env.PAUSE_PARAMETER_NAME), async () => 'running');
      intakes.set(fn.logicalId, { kind, deps: { ...deps, pause, logger: createMemoryLogger() } });
    }
  });

  beforeEach(() => {
    sfnMock.reset();
    sfnMock.on(StartExecutionCommand).resolves({ executionArn: 'arn:aws:states:::execution:x:y' });
  });

  /** Which kinds of run `event` starts: every rule it matches, then each matched intake's decision. */
  async function runsStartedBy(event: Json): Promise<string[]> {
    const started: string[] = [];
    for (const rule of rulesOf(synthesized)) {
      if (!matchesEventPattern(rule.pattern, event)) continue;
      for (const target of rule.functionTargets) {
        const intake = intakes.get(target);
        if (intake === undefined) {
          started.push(`unexpected target ${target} of ${rule.id}`);
          continue;
        }
        const decisions = await startRuns(intake.deps, event);
        if (decisions.some((d) => d.action === 'started')) started.push(intake.kind);
      }
    }
    return started;
  }

  const upload = (key: string, options: { bucket?: string; detailType?: string } = {}) =>
    objectCreatedEvent(
      { key, size: 120, etag: 'e', 'version-id': 'v1', sequencer: '01' },
      {
        bucket: options.bucket ?? inputBucket,
        ...(options.detailType === undefined ? {} : { overrides: { 'detail-type': options.detailType } }),
      },
    );

  it.each([
    ['incoming/domains.txt', 'domain list'],
    ['incoming/domains.csv', 'domain list'],
    ['incoming/Domains.TXT', 'domain list'],
    ['incoming/team/q4.CsV', 'domain list'],
    ['incoming/x.tXt', 'domain list'],
    ['watchlists/people.csv', 'watchlist'],
    ['watchlists/VIPS.JSON', 'watchlist'],
    ['watchlists/board/2026.Json', 'watchlist'],
  ])('an upload of %s starts one %s run', async (key, kind) => {
    expect(await runsStartedBy(upload(key))).toEqual([kind]);
  });

  it.each([
    ['a partial upload', 'incoming/domains.txt.part'],
    ['another suffix', 'incoming/domains.json'],
    ['a folder marker', 'incoming/'],
    ['another prefix', 'uploads/domains.txt'],
    ['the prefix in another letter case', 'Incoming/domains.txt'],
    ['a list a schedule reads', 'lists/critical.txt'],
    ['a watchlist suffix under the list prefix', 'incoming/people.json'],
    ['a list suffix under the watchlist prefix', 'watchlists/domains.txt'],
    ['a name that only contains the suffix', 'incoming/domains.txt.bak'],
  ])('%s (%s) starts nothing', async (_case, key) => {
    expect(await runsStartedBy(upload(key))).toEqual([]);
  });

  it('starts nothing for an upload to another bucket or for a deletion', async () => {
    expect(await runsStartedBy(upload('incoming/domains.txt', { bucket: 'someone-elses-bucket' }))).toEqual(
      [],
    );
    expect(await runsStartedBy(upload('incoming/domains.txt', { detailType: 'Object Deleted' }))).toEqual([]);
  });
});

describe('EventBridge wildcard complexity', () => {
  it.each([
    ['the example configuration', example],
    ['the default configuration', undefined],
  ])('no rule in %s holds more than two wildcards in one field', (_name, config) => {
    for (const rule of rulesOf(synth(config))) {
      for (const [field, count] of wildcardsPerField(rule.pattern)) {
        expect(count, `${rule.id} ${field}`).toBeLessThanOrEqual(MAX_WILDCARDS_PER_FIELD);
      }
    }
  });

  it('counts wildcards per field, $or branches included', () => {
    const counts = wildcardsPerField({
      detail: { object: { key: [{ wildcard: 'a*' }, { prefix: 'b' }] } },
      $or: [{ detail: { object: { key: [{ wildcard: 'c*' }] } } }, { source: [{ wildcard: 'd*' }] }],
    });
    expect(Object.fromEntries(counts)).toEqual({ 'detail.object.key': 2, source: 1 });
  });

  it('fails the synth (Pipeline-EventPatternWildcards) on a rule with three wildcards in one field', () => {
    // Prepare: the shape of the old upload rule, one wildcard per letter-case spelling.
    const app = new App({ outdir: testOutdir() });
    const stack = new Stack(app, 'Wildcards');
    new Rule(stack, 'TooComplex', {
      eventPattern: {
        source: ['aws.s3'],
        detail: {
          object: {
            key: [
              ...Match.wildcard('in/*.txt'),
              ...Match.wildcard('in/*.TXT'),
              ...Match.wildcard('in/*.Txt'),
            ],
          },
        },
      },
    });
    new Rule(stack, 'Cheap', {
      eventPattern: { source: ['aws.s3'], detail: { object: { key: Match.prefix('in/') } } },
    });

    // Act
    const report = new PipelineChecks(app).validateScope(app);

    // Assess
    const findings = report.violations
      .filter((v) => v.ruleName.includes('EventPatternWildcards'))
      .flatMap((v) => v.violatingResources.map((r) => r.constructPath));
    expect(findings).toEqual(['Wildcards/TooComplex/Resource']);
  });
});
