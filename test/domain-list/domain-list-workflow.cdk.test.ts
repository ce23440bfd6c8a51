import { beforeAll, describe, expect, it } from 'vitest';
import {
  type AslDefinition,
  functionFor,
  grantsOf,
  logicalIdOfType,
  resourcesAllowed,
  retriesOf,
  type Synthesized,
  stateMachineWith,
  stateNamed,
  synth,
} from '../kit/synth.ts';

let synthesized: Synthesized;
let definition: AslDefinition;
let listMachine: ReturnType<typeof stateMachineWith>;
let scanMachineId: string;
let resultsBucketId: string;

beforeAll(() => {
  synthesized = synth({ scan: { maxConcurrency: 25 } });
  listMachine = stateMachineWith(synthesized, 'PrepareDomainList');
  definition = listMachine.definition;
  scanMachineId = stateMachineWith(synthesized, 'StartScan').logicalId;
  resultsBucketId = logicalIdOfType(synthesized, 'AWS::S3::Bucket', 'StorageResults');
});

describe('DomainListScan state machine: shape', () => {
  it('prepares the list, scans each domain, writes the summary and succeeds', () => {
    expect(definition.StartAt).toBe('PrepareDomainList');
    expect(stateNamed(definition, 'PrepareDomainList').Next).toBe('ScanEachDomain');
    expect(stateNamed(definition, 'ScanEachDomain').Next).toBe('WriteListSummary');
    expect(stateNamed(definition, 'WriteListSummary').Next).toBe('ListSucceeded');
    expect(stateNamed(definition, 'ListSucceeded').Type).toBe('Succeed');
  });

  it('lets each Lambda step replace the state, so the run input is not carried to the output', () => {
    // PrepareDomainList returns references only (test/domain-list/list-limits.test.ts); a ResultPath or
    // OutputPath here would merge the input (up to 256 KiB of ad-hoc domains) back in.
    for (const name of ['PrepareDomainList', 'WriteListSummary']) {
      const state = stateNamed(definition, name);
      expect(state.ResultPath, name).toBeUndefined();
      expect(state.OutputPath, name).toBeUndefined();
      expect(state.Parameters, name).toBeUndefined();
    }
    expect(stateNamed(definition, 'ScanEachDomain').ResultPath).toBe('$.mapResult');
  });

  it('fails the run with the caught error when the list cannot be prepared', () => {
    expect(stateNamed(definition, 'PrepareDomainList').Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: 'ListFailed' },
    ]);
    expect(stateNamed(definition, 'ListFailed')).toEqual({
      Type: 'Fail',
      ErrorPath: '$.caught.Error',
      CausePath: '$.caught.Cause',
    });
  });

  it('runs PrepareDomainList and WriteListSummary as payload-only Lambda tasks with 5-minute functions', () => {
    for (const [state, handler] of [
      ['PrepareDomainList', 'prepare-domain-list'],
      ['WriteListSummary', 'write-list-summary'],
    ] as const) {
      const task = stateNamed(definition, state);
      const fn = functionFor(synthesized, handler);
      expect(task.Resource).toBe(`<GetAtt:${fn.logicalId}.Arn>`);
      expect(fn.properties.Timeout).toBe(300);
      expect(task.TimeoutSeconds).toBe(310);
      expect(retriesOf(task)[0]).toMatchObject({ JitterStrategy: 'FULL' });
    }
    expect(functionFor(synthesized, 'prepare-domain-list').properties.MemorySize).toBe(1024);
  });
});

describe('DomainListScan state machine: Distributed Map', () => {
  it('reads items.json from the bucket and key PrepareDomainList returned', () => {
    expect(stateNamed(definition, 'ScanEachDomain').ItemReader).toEqual({
      Resource: 'arn:<Ref:AWS::Partition>:states:::s3:getObject',
      ReaderConfig: { InputType: 'JSON' },
      Parameters: { 'Bucket.$': '$.resultsBucket', 'Key.$': '$.itemsKey' },
    });
  });

  it('bounds concurrency by configuration and tolerates every item failing (the summary reports them)', () => {
    const map = stateNamed(definition, 'ScanEachDomain');
    expect(map).toMatchObject({
      Type: 'Map',
      MaxConcurrency: 25,
      ToleratedFailurePercentage: 100,
      ResultPath: '$.mapResult',
      ItemProcessor: {
        ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
        StartAt: 'ScanOneDomain',
      },
    });
    expect(map.ItemSelector).toEqual({
      'domain.$': '$$.Map.Item.Value.domain',
      'executionName.$': '$$.Map.Item.Value.executionName',
      'runId.$': '$$.Map.Item.Value.runId',
      'line.$': '$$.Map.Item.Value.line',
    });
  });

  it("writes the Map results into the results bucket under the run's prefix", () => {
    expect(stateNamed(definition, 'ScanEachDomain').ResultWriter).toEqual({
      Resource: 'arn:<Ref:AWS::Partition>:states:::s3:putObject',
      Parameters: { Bucket: `<Ref:${resultsBucketId}>`, 'Prefix.$': '$.resultsPrefix' },
    });
  });

  it('runs each domain as a ScanDomain child execution (sync:2) named by the item', () => {
    const task = stateNamed(definition, 'ScanOneDomain');
    expect(task.Resource).toBe('arn:<Ref:AWS::Partition>:states:::states:startExecution.sync:2');
    expect(task.Parameters).toEqual({
      StateMachineArn: `<Ref:${scanMachineId}>`,
      'Name.$': '$.executionName',
      Input: {
        'domain.$': '$.domain',
        'runId.$': '$.runId',
        'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$': '$$.Execution.Id',
      },
    });
    expect(task.ResultSelector).toEqual({
      'domain.$': '$.Input.domain',
      'executionName.$': '$.Name',
      'output.$': '$.Output',
    });
    expect(retriesOf(task)[0]).toMatchObject({ JitterStrategy: 'FULL' });
    expect(retriesOf(task)[0]?.ErrorEquals).not.toContain('States.TaskFailed');
  });

  it('turns a failed child into a result instead of a failed item', () => {
    expect(stateNamed(definition, 'ScanOneDomain').Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: 'RecordDomainError' },
    ]);
    expect(stateNamed(definition, 'RecordDomainError')).toEqual({
      Type: 'Pass',
      Parameters: { 'domain.$': '$.domain', 'executionName.$': '$.executionName', 'caught.$': '$.caught' },
      End: true,
    });
  });

  it('is a Standard machine that logs ALL without execution data and is traced', () => {
    expect(listMachine.properties).toMatchObject({
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
    });
  });
});

describe('DomainListScan state machine: permissions', () => {
  const roleOfListMachine = () =>
    (listMachine.properties.RoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];

  it('may start, describe and stop ScanDomain executions and manage the .sync event rule', () => {
    const grants = grantsOf(synthesized, roleOfListMachine());
    expect(resourcesAllowed(grants, 'states:StartExecution')).toContain(`<Ref:${scanMachineId}>`);
    expect(resourcesAllowed(grants, 'states:DescribeExecution').join(' ')).toContain(scanMachineId);
    expect(resourcesAllowed(grants, 'states:StopExecution').join(' ')).toContain(scanMachineId);
    for (const action of ['events:PutTargets', 'events:PutRule', 'events:DescribeRule']) {
      expect(resourcesAllowed(grants, action).join(' ')).toContain(
        'rule/StepFunctionsGetEventsForStepFunctionsExecutionRule',
      );
    }
  });

  it('may start its own child executions (Distributed Map)', () => {
    const grants = grantsOf(synthesized, roleOfListMachine());
    expect(resourcesAllowed(grants, 'states:StartExecution')).toContain(`<Ref:${listMachine.logicalId}>`);
  });

  it('lets WriteListSummary describe ScanDomain executions only, with the machine bound as SCAN_STATE_MACHINE_ARN', () => {
    // A redriven run meets children that already ran; the summary looks up their real outcome.
    const summaryFunction = functionFor(synthesized, 'write-list-summary');
    const grants = grantsOf(synthesized, summaryFunction.roleLogicalId);
    const described = resourcesAllowed(grants, 'states:DescribeExecution');
    expect(described.length).toBeGreaterThan(0);
    for (const resource of described) {
      expect(resource).toContain(scanMachineId);
      expect(resource).not.toContain(listMachine.logicalId);
    }
    expect(resourcesAllowed(grants, 'states:StartExecution')).toEqual([]);
    expect(summaryFunction.environment.SCAN_STATE_MACHINE_ARN).toEqual({ Ref: scanMachineId });
  });

  it('reads items and writes Map results only under lists/ of the results bucket', () => {
    const grants = grantsOf(synthesized, roleOfListMachine());
    const listsPrefix = `<GetAtt:${resultsBucketId}.Arn>/lists/*`;
    expect(new Set(resourcesAllowed(grants, 's3:GetObject'))).toEqual(new Set([listsPrefix]));
    expect(new Set(resourcesAllowed(grants, 's3:PutObject'))).toEqual(new Set([listsPrefix]));
  });
});
