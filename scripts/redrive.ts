/**
 * `npm run redrive -- EXECUTION_ARN`: resumes a deployed list run (DomainListScan) or watchlist run
 * (WatchlistRun) that FAILED, was ABORTED or TIMED_OUT, with Step Functions' RedriveExecution: the
 * run continues from the step that did not complete, and its Distributed Map re-runs only the
 * iterations that did not succeed, each under its child's deterministic name, so a domain already
 * scanned (a person whose recon was sent) is looked up, never scanned (sent) again.
 *
 * It refuses what a redrive would not help: an execution of a machine without a Distributed Map
 * (a ScanDomain or BreachReport child, whose failure was recorded: start a new one), a run that is
 * still running or succeeded, and one Step Functions says it will not redrive (past the 14-day
 * redrivable period, over the history event limit, past its maximum execution time), with its
 * reason (DescribeExecution's redriveStatusReason).
 *
 * Exit codes: 0 redriven; 1 AWS would not redrive it; 2 usage (no ARN, or not an execution ARN).
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  RedriveExecutionCommand,
  SFNClient,
} from '@aws-sdk/client-sfn';

const USAGE = 'usage: npm run redrive -- EXECUTION_ARN (a DomainListScan or WatchlistRun execution)';

const EXECUTION_ARN =
  /^arn:aws[a-z-]*:states:([a-z0-9-]+):\d{12}:execution:[A-Za-z0-9_-]{1,80}:[^\s:]{1,80}$/;
const REDRIVABLE_STATUSES = new Set(['FAILED', 'ABORTED', 'TIMED_OUT']);

/** What became of the request: the lines to print, and the exit code. */
export interface RedriveResult {
  readonly code: 0 | 1 | 2;
  readonly lines: readonly string[];
}

/** The region the execution is in (from its ARN), or undefined when `arn` is not an execution ARN. */
export function executionRegion(arn: string): string | undefined {
  return EXECUTION_ARN.exec(arn)?.[1];
}

/** True when the definition runs a Distributed Map anywhere: the list and watchlist runs do. */
function hasDistributedMap(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  const config = (record.ItemProcessor as { ProcessorConfig?: { Mode?: unknown } } | undefined)
    ?.ProcessorConfig;
  if (config?.Mode === 'DISTRIBUTED') return true;
  return Object.values(record).some(hasDistributedMap);
}

/** Checks the execution, then redrives it; never throws for what AWS answers about it. */
export async function redriveRun(sfn: Pick<SFNClient, 'send'>, executionArn: string): Promise<RedriveResult> {
  if (executionRegion(executionArn) === undefined) {
    return {
      code: 2,
      lines: [`error: ${executionArn || '(empty)'} is not a Step Functions execution ARN`, USAGE],
    };
  }
  const execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
  const machine = await sfn.send(
    new DescribeStateMachineCommand({ stateMachineArn: execution.stateMachineArn }),
  );
  const machineName = machine.name ?? execution.stateMachineArn ?? 'its state machine';
  if (!hasDistributedMap(JSON.parse(machine.definition ?? '{}'))) {
    return {
      code: 1,
      lines: [
        `error: ${executionArn} is a run of ${machineName}, which has no Distributed Map: redrive the list or ` +
          'watchlist run that started it; a failed ScanDomain or BreachReport had its error recorded, so start a new one ' +
          '(docs/runbooks/README.md, "Re-running safely")',
      ],
    };
  }
  const status = execution.status ?? 'UNKNOWN';
  if (!REDRIVABLE_STATUSES.has(status)) {
    return {
      code: 1,
      lines: [`error: ${executionArn} is ${status}: only a FAILED, ABORTED or TIMED_OUT run is redriven`],
    };
  }
  if (execution.redriveStatus === 'NOT_REDRIVABLE') {
    return {
      code: 1,
      lines: [
        `error: Step Functions will not redrive ${executionArn}: ${execution.redriveStatusReason ?? 'no reason given'}; ` +
          'start a new run of the domains that did not succeed instead (docs/runbooks/README.md, "Re-running safely")',
      ],
    };
  }
  const before = execution.redriveCount ?? 0;
  // One token per attempt: the SDK's own retry of a request whose answer was lost redrives once.
  const clientToken = createHash('sha256').update(`${executionArn}\n${before}`).digest('hex');
  const redriven = await sfn.send(new RedriveExecutionCommand({ executionArn, clientToken }));
  return {
    code: 0,
    lines: [
      `Redriven ${executionArn} (${machineName}, ${status}; redrive ${before + 1}) at ${redriven.redriveDate?.toISOString() ?? 'an unknown time'}: ` +
        'it continues from the step that did not complete, and its Map Run re-runs only the iterations that did not succeed, ' +
        'each under its child execution name, so no domain is scanned and no recon sent a second time.',
      `Follow it: aws stepfunctions describe-execution --execution-arn ${executionArn} --query '{status:status,redriveCount:redriveCount}'`,
    ],
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [arn = '', ...rest] = process.argv.slice(2);
  const region = executionRegion(arn);
  let result: RedriveResult;
  if (rest.length > 0) result = { code: 2, lines: [`error: unexpected argument ${rest[0]}`, USAGE] };
  else if (region === undefined) result = await redriveRun({ send: async () => ({}) as never }, arn);
  else {
    const sfn = new SFNClient({ region });
    try {
      result = await redriveRun(sfn, arn);
    } catch (error) {
      result = { code: 1, lines: [`error: ${(error as Error).name}: ${(error as Error).message}`] };
    } finally {
      sfn.destroy();
    }
  }
  for (const line of result.lines) (result.code === 0 ? process.stdout : process.stderr).write(`${line}\n`);
  process.exitCode = result.code;
}
