/**
 * The pipeline's own cdk-nag pack: the rules in this folder, run beside AwsSolutions and Serverless.
 * A policy-validation plugin like cdk-nag 3's packs (`Validations.of(app).addPlugins(new
 * PipelineChecks(app))`), that loads cdk-nag only when it is made: an app that never runs the
 * checks needs no cdk-nag, and its declarations name none of cdk-nag's types.
 */
import type {
  CfnResource,
  IPolicyValidationContext,
  IPolicyValidationPlugin,
  PolicyValidationPluginReport,
} from 'aws-cdk-lib';
import type { NagPack, NagPackProps } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import AlarmCoverage, { withAlarmIndex } from './alarm-coverage.ts';
import { loadCdkNag } from './cdk-nag.ts';
import EventPatternWildcards, { MAX_WILDCARDS_PER_FIELD } from './event-pattern-wildcards.ts';
import FixedNameLifetime from './fixed-name-lifetime.ts';

/** How the pack reports (cdk-nag's own pack settings). */
export interface PipelineChecksProps {
  /**
   * Each finding with its explanation, not only its summary.
   * @default false
   */
  readonly verbose?: boolean;
  /**
   * Also write acknowledged rules into each resource's CloudFormation Metadata
   * (`cdk_nag: { rules_to_suppress }`), as cdk-nag 2's audit tooling reads them.
   * @default false
   */
  readonly writeSuppressionsToCloudFormation?: boolean;
}

/** cdk-nag pack `Pipeline`: Pipeline-AlarmCoverage, Pipeline-EventPatternWildcards, Pipeline-FixedNameLifetime. */
export class PipelineChecks implements IPolicyValidationPlugin {
  public readonly name = 'Pipeline';
  private readonly pack: IPolicyValidationPlugin;

  constructor(scope?: IConstruct, props?: PipelineChecksProps) {
    this.pack = createPipelinePack(scope, props);
  }

  public validate(context: IPolicyValidationContext): PolicyValidationPluginReport {
    return this.pack.validate(context);
  }

  /** The findings of the pack on `scope` directly (cdk-nag's `validateScope`), for tests and tools. */
  public validateScope(scope: IConstruct): PolicyValidationPluginReport {
    return (this.pack as NagPack).validateScope(scope);
  }
}

/** The pack, its class made on cdk-nag's `NagPack` once cdk-nag is loaded. */
function createPipelinePack(scope: IConstruct | undefined, props: NagPackProps | undefined): NagPack {
  const { NagMessageLevel, NagPack: Base } = loadCdkNag();
  class PipelinePack extends Base {
    readonly name = 'Pipeline';

    constructor() {
      super(scope, props);
      this.packName = 'Pipeline';
    }

    public override validateScope(root: IConstruct): PolicyValidationPluginReport {
      return withAlarmIndex(() => super.validateScope(root));
    }

    protected checkResource(node: CfnResource): void {
      this.applyRule({
        info: 'The resource lacks a standard alarm (function: Errors and Throttles; state machine: ExecutionsFailed, ExecutionsTimedOut, ExecutionsAborted; queue: ApproximateNumberOfMessagesVisible).',
        explanation:
          'A failure nobody is told about is found by a user. PipelineFunction, PipelineStateMachine and DeadLetterQueue create these alarms themselves (lib/platform/standard-alarms.ts); a resource built another way must add them.',
        level: NagMessageLevel.ERROR,
        rule: AlarmCoverage,
        node,
      });
      this.applyRule({
        info: `The EventBridge rule's pattern holds more than ${MAX_WILDCARDS_PER_FIELD} wildcard matchers in one field.`,
        explanation:
          'EventBridge refuses a rule whose wildcard matching is too complex ("Rule is too complex", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html), and the refusal comes only at deploy. Match with prefix, suffix or equals-ignore-case, and check the rest in the target.',
        level: NagMessageLevel.ERROR,
        rule: EventPatternWildcards,
        node,
      });
      this.applyRule({
        info: 'The resource has a fixed physical name and outlives its stack (a retained DeletionPolicy, or a secret in its recovery window).',
        explanation:
          'The next create of the same stack (after cdk destroy, or a rolled-back first create) would fail with "already exists". Let CloudFormation generate the name, or put the stack ID in it (stackCreationId in lib/platform/state-machine-log-group-name.ts).',
        level: NagMessageLevel.ERROR,
        rule: FixedNameLifetime,
        node,
      });
    }
  }
  return new PipelinePack();
}
