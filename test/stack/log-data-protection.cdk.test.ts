/**
 * The second net under the redaction of vendor text: a CloudWatch Logs data protection policy that
 * masks email addresses on every log group that can carry vendor text or a person's data, and on
 * no other (it is billed per GB scanned).
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { functionFor, type Synthesized, stateMachineWith, synth } from '../kit/synth.ts';

let synthesized: Synthesized;
beforeAll(() => {
  synthesized = synth({ vendor: { breachApiUrl: 'https://breach.vendor.example.net' } });
});

const MASKS_EMAILS = {
  DataProtectionPolicy: Match.objectLike({
    Statement: Match.arrayWith([
      Match.objectLike({
        DataIdentifier: [Match.anyValue()],
        Operation: { Deidentify: { MaskConfig: {} } },
      }),
    ]),
  }),
};

function logGroupOfFunction(handlerFile: string): Record<string, unknown> {
  const { properties } = functionFor(synthesized, handlerFile);
  const id = (properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
  return synthesized.json.Resources[id]?.Properties ?? {};
}

function logGroupOfMachine(stateName: string): Record<string, unknown> {
  const { properties } = stateMachineWith(synthesized, stateName);
  const destination = (
    properties.LoggingConfiguration as {
      Destinations: { CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [string, string] } } }[];
    }
  ).Destinations[0];
  const id = destination?.CloudWatchLogsLogGroup.LogGroupArn['Fn::GetAtt'][0] as string;
  return synthesized.json.Resources[id]?.Properties ?? {};
}

describe('log data protection (email addresses)', () => {
  it.each([
    // They read the vendor's answers: error bodies, report names, statuses.
    ['start-scan', true],
    ['poll-scan-status', true],
    ['fetch-scan-output', true],
    ['breach-recon', true],
    ['archive-breach-report', true],
    ['reconcile-breach-reports', true],
    ['reconcile-scans', true],
    ['record-vendor-stats', true],
    ['rotate-api-key', true],
    // They handle people (their requests, failures and summaries).
    ['write-breach-manifest', true],
    ['record-breach-failure', true],
    ['prepare-watchlist', true],
    ['write-watchlist-summary', true],
    // Neither: domains and counts only.
    ['prepare-domain-list', false],
    ['write-list-summary', false],
    ['start-domain-list', false],
    ['check-api-key-age', false],
  ])('%s: policy on its log group is %s', (handlerFile, expected) => {
    const properties = logGroupOfFunction(handlerFile);
    expect(masksEmails(properties)).toBe(expected);
  });

  it.each([
    ['StartScan', true],
    ['Recon', true],
    ['PrepareWatchlist', true],
    ['PrepareDomainList', false],
  ])('the state machine with %s: policy on its execution log group is %s', (stateName, expected) => {
    const properties = logGroupOfMachine(stateName);
    expect(masksEmails(properties)).toBe(expected);
  });

  it('masks email addresses in the template as CloudFormation receives it', () => {
    synthesized.template.hasResourceProperties('AWS::Logs::LogGroup', MASKS_EMAILS);
  });
});

/**
 * True when the log group's policy masks (de-identifies) the EmailAddress managed identifier. The
 * identifier's ARN is an Fn::Join over the partition, so it is matched by its JSON text.
 */
function masksEmails(properties: Record<string, unknown>): boolean {
  const policy = properties.DataProtectionPolicy as { Statement?: Record<string, unknown>[] } | undefined;
  return (policy?.Statement ?? []).some(
    (statement) =>
      JSON.stringify(statement.DataIdentifier).includes(
        ':dataprotection::aws:data-identifier/EmailAddress',
      ) && JSON.stringify(statement.Operation) === JSON.stringify({ Deidentify: { MaskConfig: {} } }),
  );
}
