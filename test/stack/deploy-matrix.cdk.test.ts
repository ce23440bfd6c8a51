/**
 * The pipeline deployed the ways platform teams deploy it: every row synthesizes with the app's
 * checks (cdk-nag's AwsSolutions and Serverless packs, the pipeline's own rules), and no two
 * pipelines of a row, in one stack or in two stacks of one account and Region, share an alarm's
 * metric identity, a physical name or an export.
 *
 * The full product of the axes is 72 syntheses of one to two stacks each; the rows below are a
 * covering array instead (checked by the first test): every value of every axis, and every pair of
 * values of any two axes, occurs in some row (12 rows do it; two more isolate two resources). The pinned accounts and Regions are drawn by
 * fast-check (fixed seed).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logicalIdOf } from '../../lib/platform/nag.ts';
import {
  CONFIGURATIONS,
  ENVIRONMENTS,
  type MatrixRow,
  type MatrixUnit,
  NEIGHBOURS,
  physicalNames,
  RESOURCES,
  settingsFor,
  synthesizeRow,
} from '../kit/deploy-matrix.ts';

const ROWS: readonly MatrixRow[] = (
  [
    ['agnostic', 'defaults', 'made', 'alone'],
    ['pinned', 'per-api', 'made', 'dev-and-prod'],
    ['agnostic', 'example', 'made', 'two-in-one-stack'],
    ['pinned', 'per-api', 'brought', 'alone'],
    ['agnostic', 'example', 'brought', 'dev-and-prod'],
    ['pinned', 'defaults', 'brought', 'two-in-one-stack'],
    ['pinned', 'example', 'imported', 'alone'],
    ['pinned', 'defaults', 'imported', 'dev-and-prod'],
    ['agnostic', 'per-api', 'imported', 'two-in-one-stack'],
    ['pinned', 'defaults', 'customer-key', 'alone'],
    ['agnostic', 'per-api', 'customer-key', 'dev-and-prod'],
    ['agnostic', 'example', 'customer-key', 'two-in-one-stack'],
    // The imported and customer-key resources in the plainest shape too, so that their own checks
    // are what fails when they break, not a pinned environment or a neighbour.
    ['agnostic', 'defaults', 'imported', 'alone'],
    ['agnostic', 'defaults', 'customer-key', 'alone'],
  ] as const
).map(([environment, configuration, resources, neighbours]) => ({
  environment,
  configuration,
  resources,
  neighbours,
}));

/** Commercial-partition Regions, the longest names among them included. */
const REGIONS = ['eu-west-1', 'us-east-1', 'ap-southeast-5', 'ca-central-1', 'me-central-1', 'sa-east-1'];
const PINNED = fc.sample(
  fc.record({ account: fc.stringMatching(/^[0-9]{12}$/), region: fc.constantFrom(...REGIONS) }),
  { seed: 42, numRuns: ROWS.length },
);

const AXES = {
  environment: ENVIRONMENTS,
  configuration: CONFIGURATIONS,
  resources: RESOURCES,
  neighbours: NEIGHBOURS,
};

type Properties = Record<string, unknown>;

/** The properties of each resource of `type` under the unit's pipeline, by logical ID. */
function resourcesOf(unit: MatrixUnit, type: string): [string, Properties][] {
  return Object.entries(unit.template.Resources)
    .filter(([id, resource]) => resource.Type === type && unit.logicalIds.has(id))
    .map(([id, resource]) => [id, resource.Properties ?? {}]);
}

/** The service (Powertools' `service` dimension) every function of the unit writes its metrics as. */
function servicesOf(unit: MatrixUnit): Set<unknown> {
  return new Set(
    resourcesOf(unit, 'AWS::Lambda::Function').map(
      ([, fn]) =>
        (fn.Environment as { Variables?: Properties } | undefined)?.Variables?.POWERTOOLS_SERVICE_NAME,
    ),
  );
}

interface MetricQuery {
  readonly Namespace?: string;
  readonly MetricName?: string;
  readonly Dimensions?: { Name: string; Value: unknown }[];
}

/**
 * What each alarm watches, as CloudWatch tells metrics apart: namespace, name and literal
 * dimensions (a dimension naming a resource of this stack by Ref is this stack's alone), and each
 * Metrics Insights or SEARCH query's text.
 */
function alarmIdentities(unit: MatrixUnit): string[] {
  const identities: string[] = [];
  const metric = (m: MetricQuery) => {
    const dimensions = m.Dimensions ?? [];
    if (dimensions.some((d) => typeof d.Value !== 'string')) return;
    const sorted = dimensions.map((d) => `${d.Name}=${d.Value as string}`).sort();
    identities.push(`${m.Namespace}|${m.MetricName}|${sorted.join(',')}`);
  };
  for (const [, alarm] of resourcesOf(unit, 'AWS::CloudWatch::Alarm')) {
    const p = alarm;
    if (p.MetricName !== undefined) metric(p as MetricQuery);
    for (const query of (p.Metrics as { MetricStat?: { Metric: MetricQuery }; Expression?: unknown }[]) ??
      []) {
      if (query.MetricStat) metric(query.MetricStat.Metric);
      const expression = JSON.stringify(query.Expression ?? '');
      if (/SELECT|SEARCH/.test(expression)) identities.push(`query|${expression}`);
    }
  }
  return identities;
}

describe('the deploy matrix', () => {
  it('covers every value of every axis, and every pair of values of two axes', () => {
    const axes = Object.entries(AXES) as [keyof MatrixRow, readonly string[]][];
    for (const [i, [a, aValues]] of axes.entries()) {
      for (const [b, bValues] of axes.slice(i + 1)) {
        for (const x of aValues) {
          for (const y of bValues) {
            expect(
              ROWS.some((row) => row[a] === x && row[b] === y),
              `${a}=${x} with ${b}=${y}`,
            ).toBe(true);
          }
        }
      }
    }
  });

  describe.each(ROWS.map((row, i) => [`${Object.values(row).join(' / ')}`, row, PINNED[i]] as const))(
    '%s',
    (_name, row, pinned) => {
      // Synthesized once per row (the app's checks fail the synth on any unacknowledged finding).
      let shape: ReturnType<typeof synthesizeRow> | undefined;
      const synthesized = () => {
        shape ??= synthesizeRow(row, pinned as { account: string; region: string });
        return shape;
      };

      it('synthesizes with every nag pack the app uses, and the pipeline runs on its configured runtime', () => {
        const { units } = synthesized();
        const runtime = settingsFor(row.configuration).lambdaRuntime ?? 'nodejs24.x';
        for (const unit of units) {
          const functions = resourcesOf(unit, 'AWS::Lambda::Function').filter(([, fn]) =>
            String(fn.Description).startsWith('Security pipeline:'),
          );
          expect(functions.length, unit.label).toBeGreaterThan(10);
          expect(new Set(functions.map(([, fn]) => fn.Runtime)), unit.label).toEqual(new Set([runtime]));
        }
      });

      it('gives each pipeline metrics of its own: no alarm watches what a neighbour writes', () => {
        const { units } = synthesized();
        const services = units.map((unit) => [...servicesOf(unit)]);
        for (const [i, unit] of units.entries()) {
          // One service per pipeline, every alarm on the pipeline's namespace filtered to it.
          expect(services[i], unit.label).toHaveLength(1);
          const service = services[i]?.[0] as string;
          for (const identity of alarmIdentities(unit)) {
            if (identity.startsWith('SecurityPipeline|'))
              expect(identity, unit.label).toContain(`service=${service}`);
            if (identity.startsWith('query|'))
              expect(identity, unit.label).toContain(`service = '${service}'`);
          }
          const [[, dashboard] = ['', undefined]] = resourcesOf(unit, 'AWS::CloudWatch::Dashboard');
          const body = JSON.stringify(dashboard?.DashboardBody);
          const searches = body.match(/SEARCH\('\{SecurityPipeline[^']*'/g) ?? [];
          expect(searches.length, unit.label).toBeGreaterThan(0);
          for (const search of searches)
            expect(search, unit.label).toContain(`service=\\\\\\"${service}\\\\\\"`);
        }
        for (const [i, a] of units.entries()) {
          for (const b of units.slice(i + 1)) {
            expect(services[i], `${a.label} and ${b.label}`).not.toEqual(services[units.indexOf(b)]);
            const shared = alarmIdentities(a).filter((identity) => alarmIdentities(b).includes(identity));
            expect(shared, `alarm metrics of ${a.label} also in ${b.label}`).toEqual([]);
          }
        }
      });

      it('lets no vendor-facing function delete a version outside the staging prefix', () => {
        for (const unit of synthesized().units) {
          // Vendor-facing: its role reads a vendor key secret, so it calls the vendor and handles its answers.
          const vendorFacing = resourcesOf(unit, 'AWS::IAM::Policy').filter(([, policy]) =>
            JSON.stringify(policy.PolicyDocument).includes('secretsmanager:GetSecretValue'),
          );
          expect(vendorFacing.length, unit.label).toBeGreaterThan(3);
          for (const [id, policy] of vendorFacing) {
            for (const statement of (policy.PolicyDocument as { Statement: Properties[] }).Statement) {
              if (!JSON.stringify(statement.Action).includes('s3:DeleteObjectVersion')) continue;
              const resources = [statement.Resource].flat().map((resource) => JSON.stringify(resource));
              for (const resource of resources) expect(resource, id).toMatch(/\/staging\/[^"]*\*"/);
            }
          }
        }
      });

      it('shares no physical name or export between pipelines', () => {
        const { units, exports } = synthesized();
        expect(new Set(exports).size).toBe(exports.length);
        const names = units.map(physicalNames);
        for (const [i, a] of names.entries()) {
          for (const b of names.slice(i + 1)) {
            expect([...a.keys()].filter((name) => b.has(name))).toEqual([]);
          }
        }
      });

      if (row.resources === 'imported') {
        it('turns EventBridge notifications on for the imported input bucket, keeping its others', () => {
          for (const unit of synthesized().units) {
            const wired = Object.values(unit.template.Resources).filter(
              (r) =>
                r.Type === 'Custom::S3BucketNotifications' &&
                r.Properties?.BucketName === unit.brought.inputBucketName,
            );
            expect(wired, unit.label).toHaveLength(1);
            // Managed false: the handler merges into the bucket's configuration instead of replacing it.
            expect(wired[0]?.Properties).toMatchObject({
              Managed: false,
              NotificationConfiguration: { EventBridgeConfiguration: {} },
            });
          }
        });
      }

      if (row.resources === 'customer-key') {
        it('grants the customer managed key to every role that reads or writes what it encrypts', () => {
          for (const unit of synthesized().units) {
            const { key } = unit.brought;
            if (key === undefined) throw new Error(`${unit.label} brought no key`);
            const keyId = logicalIdOf(key);
            const encrypted = [...unit.brought.buckets, ...unit.brought.secrets].map((r) => logicalIdOf(r));
            let checked = 0;
            for (const [id, policy] of resourcesOf(unit, 'AWS::IAM::Policy')) {
              const statements = (policy.PolicyDocument as { Statement: Properties[] }).Statement;
              const text = (s: Record<string, unknown>) => JSON.stringify(s.Resource);
              const touches = statements.some(
                (s) =>
                  JSON.stringify(s.Action).match(/s3:(Get|Put)Object|secretsmanager:GetSecretValue/) &&
                  encrypted.some((resource) => text(s).includes(`"${resource}"`)),
              );
              if (!touches) continue;
              checked += 1;
              const decrypts = statements.some(
                (s) => JSON.stringify(s.Action).includes('kms:Decrypt') && text(s).includes(`"${keyId}"`),
              );
              expect(decrypts, `${id} uses what the key encrypts`).toBe(true);
            }
            expect(checked, unit.label).toBeGreaterThan(5);
          }
        });
      }
    },
  );
});
