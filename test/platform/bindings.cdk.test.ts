/**
 * bindDeclared binds a workflow's own resources (its state machine, its secrets, its mirror list)
 * through the variables that workflow registers (WORKFLOW_BINDINGS), without the platform naming
 * any: each declared resource gets its grant and its workflow's variable, and one not passed is a
 * synth error that names the function and the resource.
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import { Pass, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  HANDLERS,
  type HandlerFile,
  type PipelineHandlerDeclaration,
  registeredHandler,
  WORKFLOW_BINDINGS,
  type WorkflowName,
} from '#lambdas/registry';
import { bindDeclared, type DeclaredResources } from '../../lib/platform/bindings.ts';
import { PipelineFunction } from '../../lib/platform/pipeline-function.ts';
import { bareStack, FIRST_SYNTH_TIMEOUT_MS } from '../kit/stack.ts';

function machine(stack: Stack, id: string): StateMachine {
  return new StateMachine(stack, id, { definition: new Pass(stack, `${id}Pass`) });
}
const withResults = (stack: Stack) => ({ resultsBucket: new Bucket(stack, 'Results') });
const withInput = (stack: Stack) => ({ inputBucket: new Bucket(stack, 'Input') });
const pauseParameter = (stack: Stack) => new StringParameter(stack, 'Pause', { stringValue: 'running' });

/** The one function's environment variables. */
function environmentOf(template: Template): Record<string, unknown> {
  const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
  return (fn?.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>;
}

/** One function of `handler`, bound to what `resources` builds in its stack. */
function bound(handler: HandlerFile, resources: (stack: Stack) => Partial<DeclaredResources>) {
  const stack = bareStack();
  const fn = new PipelineFunction(stack, 'Fn', {
    handler: registeredHandler(handler),
    timeout: Duration.seconds(30),
  });
  bindDeclared(fn, { ...resources(stack) });
  return { stack, template: Template.fromStack(stack) };
}

function refusal(handler: HandlerFile, resources: (stack: Stack) => Partial<DeclaredResources>): string {
  try {
    bound(handler, resources);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected bindDeclared to refuse ${handler}`);
}

beforeAll(() => {
  bareStack();
}, FIRST_SYNTH_TIMEOUT_MS);

describe('every declared workflow resource has its variable registered, by one owner', () => {
  const declarations: [string, PipelineHandlerDeclaration][] = Object.entries(HANDLERS);

  it.each(declarations)('%s', (_handler, declaration) => {
    for (const owner of Object.keys(declaration.stateMachines ?? {})) {
      expect(WORKFLOW_BINDINGS[owner as WorkflowName].stateMachine?.variable).toMatch(/^[A-Z][A-Z0-9_]*$/);
    }
    for (const name of declaration.secrets ?? []) {
      const owners = Object.values(WORKFLOW_BINDINGS).filter((bindings) => bindings.secrets?.[name]);
      expect(owners).toHaveLength(1);
    }
    if (declaration.rotatedSecret === 'rotate') {
      expect(WORKFLOW_BINDINGS[declaration.workflow].mirrorSecretsVariable).toMatch(/^[A-Z][A-Z0-9_]*$/);
    }
  });
});

describe('state machines', () => {
  it('binds a child machine its summary looks up: DescribeExecution on its executions, its variable', () => {
    const { template } = bound('write-list-summary', (stack) => ({
      ...withResults(stack),
      stateMachines: { scan: machine(stack, 'Child') },
    }));
    const variable = WORKFLOW_BINDINGS.scan.stateMachine?.variable ?? '';
    expect(environmentOf(template)[variable]).toEqual({ Ref: expect.stringMatching(/^Child/) });
    // On the child's executions only (`execution:<machine name>:*`), never on the machine itself.
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain(
      '{"Action":"states:DescribeExecution","Effect":"Allow","Resource":{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":states:",{"Ref":"AWS::Region"},":",{"Ref":"AWS::AccountId"},":execution:",{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"ChildDAB30558"}]}]},":*"]]}}',
    );
  });

  it('refuses a declared machine not passed, naming the function and the machine', () => {
    const message = refusal('write-list-summary', withResults);
    expect(message).toContain(
      '/Fn: lambdas/registry.ts declares that write-list-summary uses the ScanDomain state machine',
    );
  });

  it("binds an intake to its own workflow's machine under that workflow's variable", () => {
    for (const [handler, owner] of [
      ['start-domain-list', 'list'],
      ['start-watchlist', 'watchlist'],
    ] as const) {
      const { template } = bound(handler, (stack) => ({
        ...withInput(stack),
        pause: { parameter: pauseParameter(stack) },
        stateMachines: { [owner]: machine(stack, 'Own') },
      }));
      const variable = WORKFLOW_BINDINGS[owner].stateMachine?.variable ?? '';
      expect(environmentOf(template)[variable]).toEqual({ Ref: expect.stringMatching(/^Own/) });
      expect(JSON.stringify(template.toJSON())).toContain('states:StartExecution');
    }
  });
});

describe('secrets', () => {
  it('grants GetSecretValue on the declared secret only and sets its registered variable', () => {
    const { template } = bound('prepare-watchlist', (stack) => ({
      ...withResults(stack),
      ...withInput(stack),
      secrets: { identityKey: new Secret(stack, 'Identity') },
    }));
    const variable = WORKFLOW_BINDINGS.watchlist.secrets?.identityKey ?? '';
    expect(environmentOf(template)[variable]).toEqual({ Ref: expect.stringMatching(/^Identity/) });
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('secretsmanager:GetSecretValue');
    expect(policies).not.toContain('secretsmanager:DescribeSecret');
  });

  it('refuses a declared secret not passed', () => {
    const message = refusal('prepare-watchlist', (stack) => ({ ...withResults(stack), ...withInput(stack) }));
    expect(message).toContain('uses the secret identityKey, but none was passed to bindDeclared');
  });
});
