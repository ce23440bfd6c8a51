/**
 * What a team wires SecurityPipeline into its app with: each grant's policy on the team's role, each
 * metric as the handlers record it, a named type for every public member, and no outputs of the
 * construct's own (the deployable app's stack adds those).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CfnElement, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { RECON_STATUSES } from '../../lambdas/breach/contracts.ts';
import { METRICS_NAMESPACE } from '../../lambdas/platform/metrics.ts';
import { OUTCOME_STATE } from '../../lambdas/scan/record-scan-failure.ts';
import {
  BreachArchiveOrigin,
  BreachReportOutcome,
  ScanFailureReason,
} from '../../lib/construct/metric-dimensions.ts';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { pipelineServiceName } from '../../lib/platform/pipeline-metric.ts';
import { SecurityPipeline } from '../../lib/security-pipeline.ts';
import { testApp } from '../kit/synth.ts';

let stack: Stack;
let pipeline: SecurityPipeline;
let template: Template;
const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

beforeAll(() => {
  stack = new Stack(testApp(), 'Team');
  pipeline = new SecurityPipeline(stack, 'Pipeline', {
    vendor: { scanApiUrl: 'https://api.vendor.example' },
  });
  const role = (id: string) =>
    new Role(stack, id, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  pipeline.grantStartScan(role('Scanner'));
  pipeline.grantStartDomainListScan(role('Lister'));
  pipeline.grantReadResults(role('Reader'));
  pipeline.grantStartBreachReport(role('BreachStarter'));
  pipeline.grantReadBreachReports(role('BreachReader'));
  template = Template.fromStack(stack);
});

/** The statements of the policies attached to the role `roleId`. */
function statementsOf(roleId: string): { Action: unknown; Resource: unknown }[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
    JSON.stringify(policy.Properties.Roles).includes(`"${roleId}`),
  );
  return policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement);
}

const objectsUnder = (bucketId: string, prefix: string) => ({
  'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, `/${prefix}*`]],
});

describe('grants', () => {
  it.each([
    ['grantStartScan', 'Scanner', () => pipeline.scanStateMachine],
    ['grantStartDomainListScan', 'Lister', () => pipeline.domainListStateMachine],
    ['grantStartBreachReport', 'BreachStarter', () => pipeline.breachStateMachine],
  ])('%s lets the role start that state machine, and nothing else', (_, roleId, machine) => {
    expect(statementsOf(roleId)).toEqual([
      { Action: 'states:StartExecution', Effect: 'Allow', Resource: { Ref: logicalId(machine()) } },
    ]);
  });

  it('grantReadResults reads scans/ and lists/ in the results bucket, never breach/', () => {
    const results = logicalId(pipeline.resultsBucket);
    const statements = statementsOf('Reader');
    const resources = statements.flatMap((statement) => statement.Resource as unknown[]);
    expect(resources).toEqual(
      expect.arrayContaining([objectsUnder(results, 'scans/'), objectsUnder(results, 'lists/')]),
    );
    expect(JSON.stringify(resources)).not.toContain('breach/');
    expect(JSON.stringify(resources)).not.toContain(logicalId(pipeline.inputBucket));
    for (const statement of statements)
      expect(statement.Action).toEqual(expect.arrayContaining(['s3:GetObject*', 's3:List*']));
  });

  it('grantReadBreachReports reads breach/ only', () => {
    const resources = statementsOf('BreachReader').flatMap((statement) => statement.Resource as unknown[]);
    expect(resources).toContainEqual(objectsUnder(logicalId(pipeline.resultsBucket), 'breach/'));
    expect(JSON.stringify(resources)).not.toMatch(/scans\/|lists\//);
  });
});

describe('metrics', () => {
  // The pipeline's own name (its stack's, and its path there): what its functions write.
  const service = () => ({ service: pipelineServiceName(pipeline) });

  it('names the pipeline in the service dimension, not a name every pipeline shares', () => {
    expect(service().service).toMatch(/^Team\b/);
  });

  it.each([
    ['metricScansStarted', () => pipeline.metricScansStarted(), 'ScansStarted', { workflow: 'scan' }, 'Sum'],
    [
      'metricScansSucceeded',
      () => pipeline.metricScansSucceeded(),
      'ScansSucceeded',
      { workflow: 'scan' },
      'Sum',
    ],
    [
      'metricScansFailed',
      () => pipeline.metricScansFailed(ScanFailureReason.POLL_FAILED),
      'ScansFailed',
      { workflow: 'scan', outcome: 'PollFailed' },
      'Sum',
    ],
    [
      'metricScansTimedOut',
      () => pipeline.metricScansTimedOut(),
      'ScansTimedOut',
      { workflow: 'scan', outcome: 'ScanTimedOut' },
      'Sum',
    ],
    [
      'metricScanDuration',
      () => pipeline.metricScanDuration(),
      'ScanDurationSeconds',
      { workflow: 'scan', outcome: 'succeeded' },
      'p95',
    ],
    [
      'metricBreachReports',
      () => pipeline.metricBreachReports(BreachReportOutcome.NO_RESULTS),
      'BreachReports',
      { workflow: 'breach', outcome: 'no_results' },
      'Sum',
    ],
    [
      'metricBreachReportsArchived',
      () => pipeline.metricBreachReportsArchived(BreachArchiveOrigin.RECONCILED),
      'BreachReportsArchived',
      { workflow: 'breach', outcome: 'reconciled' },
      'Sum',
    ],
    [
      'metricKeyRotations',
      () => pipeline.metricKeyRotations(),
      'KeyRotations',
      { workflow: 'rotation' },
      'Sum',
    ],
    [
      'metricApiKeyAge',
      () => pipeline.metricApiKeyAge(),
      'ApiKeyAgeDays',
      { workflow: 'rotation' },
      'Maximum',
    ],
  ])(
    '%s is the metric the handlers record, with its service dimension',
    (_, metric, name, dimensions, statistic) => {
      const made = metric();
      expect(made.namespace).toBe(METRICS_NAMESPACE);
      expect(made.metricName).toBe(name);
      expect(made.dimensions).toEqual({ ...service(), ...dimensions });
      expect(made.statistic).toBe(statistic);
    },
  );

  it('takes the options a team adds, and alarms on them as CloudWatch stores the metric', () => {
    const alarmStack = new Stack(testApp(), 'Alarmed');
    const own = new SecurityPipeline(alarmStack, 'Pipeline', {
      vendor: { scanApiUrl: 'https://api.vendor.example' },
    });
    new Alarm(alarmStack, 'TeamAlarm', {
      metric: own.metricScansFailed(ScanFailureReason.OUTPUT_FETCH_FAILED, { statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
    });
    Template.fromStack(alarmStack).hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRICS_NAMESPACE,
      MetricName: 'ScansFailed',
      Statistic: 'Maximum',
      Period: 300,
      Dimensions: Match.arrayEquals([
        { Name: 'outcome', Value: 'OutputFetchFailed' },
        { Name: 'service', Value: pipelineServiceName(own) },
        { Name: 'workflow', Value: 'scan' },
      ]),
    });
  });

  it('names every outcome the handlers record, and no other', () => {
    expect(Object.values(ScanFailureReason).sort()).toEqual(
      [...Object.keys(OUTCOME_STATE).filter((name) => name !== 'ScanTimedOut'), 'Other'].sort(),
    );
    expect(Object.values(BreachReportOutcome).sort()).toEqual([...RECON_STATUSES].sort());
  });
});

describe('public members', () => {
  it('adds no CloudFormation outputs to the team stack', () => {
    expect(template.toJSON().Outputs ?? {}).toEqual({});
  });

  it("exports the type of every public member from the package's entry point", () => {
    const declaredTypes = ['lib/security-pipeline.ts', 'lib/construct/security-pipeline-base.ts'].flatMap(
      (file) => {
        const source = ts.createSourceFile(
          file,
          readFileSync(join(REPO_ROOT, file), 'utf8'),
          ts.ScriptTarget.Latest,
        );
        const names: string[] = [];
        const visit = (node: ts.Node): void => {
          if (
            ts.isPropertyDeclaration(node) &&
            node.type &&
            !node.modifiers?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword)
          ) {
            const collect = (type: ts.Node): void => {
              if (ts.isTypeReferenceNode(type)) names.push(type.typeName.getText(source));
              type.forEachChild(collect);
            };
            collect(node.type);
          }
          node.forEachChild(visit);
        };
        visit(source);
        return names;
      },
    );
    const index = readFileSync(join(REPO_ROOT, 'lib/index.ts'), 'utf8');
    // CDK's own interfaces (IBucket, ITopic…) are aws-cdk-lib's to export.
    const ours = [...new Set(declaredTypes)].filter((name) => !/^I[A-Z]/.test(name));
    expect(ours.filter((name) => !new RegExp(`\\b${name}\\b`).test(index))).toEqual([]);
    expect(ours).toEqual(expect.arrayContaining(['AlarmNotifications', 'PipelineStorage', 'PipelineConfig']));
  });
});
