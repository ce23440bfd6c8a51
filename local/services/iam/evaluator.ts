/**
 * Evaluates every AWS call a handler makes, locally, the way IAM would in the deployed stack: the
 * call's action, resource and condition keys against its function's role policies and the target's
 * resource policy from the synthesized template, with @cloud-copilot/iam-simulate (real IAM logic:
 * explicit deny, same-account identity-or-resource allow, every condition operator). A denied call
 * throws the SDK's AccessDenied error before it reaches the local service, so a run stops at the
 * same call a deployed stack would.
 *
 * iam-simulate is AGPL-3.0: a devDependency used by the local runner and the tests only, never
 * imported from lambdas/ or lib/, so never bundled into a Lambda.
 */
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { handlerEntryPath } from '#lambdas/registry';
import { currentHandler } from './attribution.ts';
import { createDecisionMemo } from './decision-memo.ts';
import { type AuthorizationRequest, authorizationRequests, type ResourceNaming } from './requests.ts';
import { secretArn } from './resource-types.ts';
import type { IamView } from './view.ts';

/** What the deployed service answers a denied call with; S3 and SQS say AccessDenied, the JSON services AccessDeniedException. */
const DENIED_ERROR_NAME: Readonly<Record<string, string>> = {
  S3Client: 'AccessDenied',
  SQSClient: 'AccessDenied',
};

export interface Denial {
  readonly handler: string;
  readonly command: string;
  readonly action: string;
  readonly resource: string;
  readonly message: string;
}

/** Shaped like the SDK's service exceptions, so handlers and the CLI treat it as AWS's own. */
export class AccessDeniedError extends Error {
  readonly $fault = 'client' as const;
  readonly $metadata = { httpStatusCode: 403, attempts: 1, totalRetryDelay: 0 };
  readonly Code: string;
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
    this.Code = name;
  }
}

export interface LocalResourceNames {
  /** Local bucket name -> deployed bucket name. */
  readonly buckets?: Readonly<Record<string, string>>;
  /** Local secret name -> deployed secret ARN. */
  readonly secrets?: Readonly<Record<string, string>>;
}

export interface EvaluationStats {
  /** Requests checked (a command can be more than one, e.g. CopyObject's read and write). */
  readonly checks: number;
  /** Checks the simulator ran; the others were answered by an identical earlier allow (decision-memo.ts). */
  readonly simulations: number;
  /** Time spent in the simulator. */
  readonly milliseconds: number;
  readonly denials: readonly Denial[];
}

export interface IamEvaluator {
  /** Checks `command` as the running handler's function; throws AccessDenied on the first denied request. */
  check(clientName: string, command: string, input: Readonly<Record<string, unknown>>): Promise<void>;
  /** Adds the check to every command `client` sends (idempotent). */
  watch<C extends WatchableClient>(client: C): C;
  stats(): EvaluationStats;
}

export interface WatchableClient {
  readonly middlewareStack: {
    add(
      middleware: (
        next: (args: { input: object }) => Promise<unknown>,
        context: { clientName?: string; commandName?: string },
      ) => (args: { input: object }) => Promise<unknown>,
      options: { step: 'initialize'; name: string },
    ): void;
  };
}

/** `name` from a secret ARN (`…:secret:name-` and six characters), or the id itself when it is a name. */
function secretName(id: string): string {
  const match = /^arn:[^:]+:secretsmanager:[^:]*:[^:]*:secret:(.+)-[A-Za-z0-9]{6}$/.exec(id);
  return match?.[1] ?? id;
}

function resourcePolicyKey(resource: string): string {
  // Object ARNs answer to their bucket's policy.
  return resource.replace(/^(arn:[^:]+:s3:::[^/]+)\/.*$/, '$1');
}

export function createIamEvaluator(
  view: IamView,
  local: LocalResourceNames = {},
  options: { readonly remember?: boolean } = {},
): IamEvaluator {
  const { account, region, partition } = view.environment;
  const naming: ResourceNaming = {
    account,
    region,
    partition,
    bucket: (name) => local.buckets?.[name] ?? name,
    secret: (id) => {
      const mapped = local.secrets?.[secretName(id)];
      if (mapped) return mapped;
      return id.startsWith('arn:') ? id : secretArn({ partition, region, account }, id);
    },
  };
  let checks = 0;
  let simulations = 0;
  let milliseconds = 0;
  const memo = options.remember === false ? undefined : createDecisionMemo();
  /** Simulations under way by memo key: parallel lanes making the same request wait for the first. */
  const pending = new Map<string, Promise<unknown>>();
  const denials: Denial[] = [];
  const watched = new WeakSet<object>();

  async function evaluate(
    handler: string,
    clientName: string,
    command: string,
    request: AuthorizationRequest,
  ) {
    const fn = view.functions[handler];
    if (!fn) {
      throw new Error(
        `IAM evaluation: the synthesized template has no function for ${handlerEntryPath(handler)}`,
      );
    }
    const now = new Date();
    const session = `arn:${partition}:sts::${account}:assumed-role/${fn.roleName}/${fn.functionName}`;
    const resourceAccount = request.resource.split(':')[4] || account;
    // What AWS puts in a Lambda role session's request context over HTTPS; aws:SourceAccount and
    // aws:SourceArn are absent, as for any call that is not a service acting for another
    // (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html).
    const context: Record<string, string | string[]> = {
      'aws:SecureTransport': 'true',
      'aws:PrincipalArn': fn.roleArn,
      'aws:PrincipalAccount': account,
      'aws:PrincipalType': 'AssumedRole',
      'aws:PrincipalIsAWSService': 'false',
      'aws:ViaAWSService': 'false',
      'aws:RequestedRegion': region,
      'aws:ResourceAccount': resourceAccount,
      'aws:CurrentTime': now.toISOString(),
      'aws:EpochTime': String(Math.floor(now.getTime() / 1000)),
      ...(request.action.startsWith('s3:')
        ? { 's3:TlsVersion': '1.3', 's3:signatureversion': 'AWS4-HMAC-SHA256', 's3:authType': 'REST-HEADER' }
        : {}),
      ...request.context,
    };
    const policyKey = resourcePolicyKey(request.resource);
    const resourcePolicy = view.resourcePolicies[policyKey];
    checks += 1;
    const memoKey = memo?.keyOf(
      `${handler} ${policyKey}`,
      [...fn.policies.map((p) => p.policy), ...(resourcePolicy ? [resourcePolicy] : [])],
      request.action,
      request.resource,
      context,
    );
    if (memo?.isAllowed(memoKey)) return;
    const earlier = memoKey === undefined ? undefined : pending.get(memoKey);
    if (earlier) {
      await earlier.catch(() => undefined);
      if (memo?.isAllowed(memoKey)) return;
    }
    const simulation: Simulation = {
      request: {
        principal: session,
        action: request.action,
        resource: { resource: request.resource, accountId: resourceAccount },
        contextVariables: context,
      },
      identityPolicies: fn.policies.map((p) => ({ name: p.name, policy: p.policy })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy ? { resourcePolicy } : {}),
    };
    const started = performance.now();
    const simulating = runSimulation(simulation, {});
    if (memoKey !== undefined && !pending.has(memoKey)) {
      pending.set(memoKey, simulating);
      const done = () => pending.delete(memoKey);
      void simulating.then(done, done);
    }
    const result = await simulating;
    milliseconds += performance.now() - started;
    simulations += 1;
    if (result.resultType === 'error') {
      throw new Error(
        `IAM evaluation of ${request.action} on ${request.resource} (${command}) could not run: ${result.errors.message}`,
      );
    }
    if (result.overallResult === 'Allowed') {
      memo?.rememberAllowed(memoKey);
      return;
    }
    const analysis = result.resultType === 'single' ? result.result.analysis : undefined;
    const because =
      analysis?.resourceAnalysis?.result === 'ExplicitlyDenied'
        ? 'with an explicit deny in a resource-based policy'
        : analysis?.identityAnalysis?.result === 'ExplicitlyDenied'
          ? 'with an explicit deny in an identity-based policy'
          : `because no identity-based policy allows the ${request.action} action`;
    // The wording of AWS's own message (https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_access-denied.html).
    const message = `User: ${session} is not authorized to perform: ${request.action} on resource: "${request.resource}" ${because}`;
    denials.push({ handler, command, action: request.action, resource: request.resource, message });
    throw new AccessDeniedError(DENIED_ERROR_NAME[clientName] ?? 'AccessDeniedException', message);
  }

  const evaluator: IamEvaluator = {
    async check(clientName, command, input) {
      const handler = currentHandler();
      if (handler === undefined) return;
      for (const request of authorizationRequests(clientName, command, input, naming)) {
        await evaluate(handler, clientName, command, request);
      }
    },
    watch(client) {
      if (watched.has(client)) return client;
      watched.add(client);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          await evaluator.check(String(context.clientName), String(context.commandName), args.input as never);
          return next(args);
        },
        { step: 'initialize', name: 'iamPolicyEvaluation' },
      );
      return client;
    },
    stats: () => ({ checks, simulations, milliseconds, denials: [...denials] }),
  };
  return evaluator;
}

/** The evaluator a local run uses: the local buckets and rotated secret stand for the stack's. */
export function localRunEvaluator(
  view: IamView,
  names: { inputBucket: string; resultsBucket: string; rotatedSecret?: string },
): IamEvaluator {
  const rotated = view.rotatedSecrets[0];
  return createIamEvaluator(view, {
    buckets: {
      ...(view.buckets.input ? { [names.inputBucket]: view.buckets.input } : {}),
      ...(view.buckets.results ? { [names.resultsBucket]: view.buckets.results } : {}),
    },
    secrets: rotated && names.rotatedSecret ? { [secretName(names.rotatedSecret)]: rotated } : {},
  });
}
