import { RemovalPolicy } from 'aws-cdk-lib';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { PLACEHOLDER_FIELD } from '#lambdas/platform/secret-placeholder';
import type { VendorKeyMode } from '../config/schema.ts';
import { acknowledge } from './nag.ts';

/** `Api`: the vendor APIs' names (lambdas/registry.ts `VendorApi`); the platform names none. */
export interface VendorSecretsProps<Api extends string = string> {
  /**
   * Every vendor API, with what a key secret's description calls it, e.g. `scanning API`
   * (`VENDOR_API_TITLES`, lambdas/registry.ts). In `per-api` mode each gets its own secret,
   * `<Name>ApiKey`.
   */
  readonly apis: Readonly<Record<Api, string>>;
  /** What the one org key serves (`single` mode), for its secret's description. */
  readonly orgKeyUsedFor: string;
  /** The runbook that says how to put the key in, e.g. `docs/runbooks/<file>.md`, for the descriptions. */
  readonly runbook: string;
  /**
   * `single`: one secret holds the org key for every API. `per-api`: one secret per API.
   * @default 'single'
   */
  readonly mode?: VendorKeyMode;
  /**
   * A secret the team brings for the org key (`single` mode only; checked in
   * lib/brought-resources.ts). Nothing is created then.
   * @default - a secret created here with a placeholder
   */
  readonly orgKeySecret?: ISecret;
  /**
   * Secrets the team brings for some APIs' own keys (`per-api` mode only; checked in
   * lib/brought-resources.ts). The other APIs' secrets are created here.
   * @default - every API's secret created here with a placeholder
   */
  readonly apiKeySecrets?: { readonly [A in Api]?: ISecret };
}

/**
 * The Secrets Manager secret(s) holding the vendor's organisation API key.
 *
 * The key never enters the template: each secret is created with a generated placeholder (a JSON
 * object without `apiKey`, so a handler fails with a clear error rather than sending a random
 * string to the vendor) and the operator puts the real key in after the first deploy.
 */
export class VendorSecrets<Api extends string = string> extends Construct {
  /** How the key(s) are stored. */
  public readonly mode: VendorKeyMode;
  /** Every secret this construct created (one, one per API in per-api mode, none when brought). */
  public readonly secrets: readonly Secret[];
  private readonly byApi: ReadonlyMap<Api, ISecret>;

  constructor(scope: Construct, id: string, props: VendorSecretsProps<Api>) {
    super(scope, id);
    const mode = props.mode ?? 'single';
    if (mode !== 'single' && mode !== 'per-api') {
      throw new Error(`VendorSecrets ${id}: mode must be 'single' or 'per-api' (got '${String(mode)}')`);
    }
    this.mode = mode;

    if (props.orgKeySecret !== undefined && mode !== 'single') {
      throw new Error(`VendorSecrets ${id}: orgKeySecret is for mode 'single' only (got '${mode}')`);
    }
    const brought: { readonly [A in Api]?: ISecret } = props.apiKeySecrets ?? {};
    if (Object.keys(brought).length > 0 && mode !== 'per-api') {
      throw new Error(`VendorSecrets ${id}: apiKeySecrets is for mode 'per-api' only (got '${mode}')`);
    }
    const apis = Object.entries(props.apis) as [Api, string][];
    if (apis.length === 0) throw new Error(`VendorSecrets ${id}: apis must name at least one vendor API`);
    if (mode === 'single') {
      // One secret serves every API: the team's own, or one created here.
      const orgKey = props.orgKeySecret ?? this.createSecret('OrgApiKey', props.orgKeyUsedFor, props.runbook);
      this.byApi = new Map(apis.map(([api]) => [api, orgKey]));
    } else {
      this.byApi = new Map(
        apis.map(([api, title]) => [
          api,
          brought[api] ?? this.createSecret(`${pascalCase(api)}ApiKey`, `the vendor ${title}`, props.runbook),
        ]),
      );
    }
    // Only what was created here: a brought secret is the team's to describe and acknowledge.
    const broughtSecrets = new Set<ISecret>(
      [props.orgKeySecret, ...Object.values<ISecret | undefined>(brought)].filter((s) => s !== undefined),
    );
    this.secrets = [...new Set(this.byApi.values())].filter(
      (secret): secret is Secret => !broughtSecrets.has(secret),
    );
  }

  /**
   * Records why a secret has no rotation schedule (cdk-nag AwsSolutions-SMG4). Called by the stack
   * for every secret the KeyRotation construct does not rotate.
   */
  public acknowledgeNotRotated(secret: ISecret, reason: string): void {
    acknowledge(secret, 'AwsSolutions-SMG4', reason);
  }

  /** The secret that holds the key for `api` (the same one for all APIs in single mode). */
  public secretFor(api: Api): ISecret {
    const secret = this.byApi.get(api);
    if (secret === undefined) throw new Error(`${this.node.path}: no key secret for the vendor API '${api}'`);
    return secret;
  }

  private createSecret(id: string, usedFor: string, runbook: string): Secret {
    return new Secret(this, id, {
      // Deleting the stack must never delete the key: the vendor holds no copy we could get back
      // without rotating, and every integration reading it would lose access.
      removalPolicy: RemovalPolicy.RETAIN,
      description:
        `Vendor organisation API key for ${usedFor}. Created with a placeholder: after deploying, run ` +
        `aws secretsmanager put-secret-value --secret-id <this secret's ARN> --secret-string file://key.json ` +
        `with {"apiKey":"<key>","orgUuid":"<org uuid>"} in key.json (${runbook}). ` +
        'Never put the key in the CDK app or its configuration.',
      generateSecretString: {
        // No `apiKey` field: until the operator stores the real key, handlers fail with "no apiKey".
        secretStringTemplate: JSON.stringify({
          [PLACEHOLDER_FIELD]: 'replace this secret with the vendor API key',
        }),
        generateStringKey: 'nonce',
        excludePunctuation: true,
      },
    });
  }
}

/** `key-info` → `KeyInfo`: an API's name as a logical id begins (`KeysApiKey` for `keys`). */
function pascalCase(name: string): string {
  return name
    .split('-')
    .map((word) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`)
    .join('');
}
