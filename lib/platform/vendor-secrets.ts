import { RemovalPolicy } from 'aws-cdk-lib';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { PLACEHOLDER_FIELD } from '#lambdas/platform/secret-placeholder';
import type { VendorApiName, VendorKeyMode } from '../config/index.ts';
import { acknowledge } from './nag.ts';

export interface VendorSecretsProps {
  /**
   * `single`: one secret holds the org key for all three APIs. `per-api`: one secret per API.
   * @default 'single'
   */
  readonly mode?: VendorKeyMode;
  /**
   * A secret the team brings for the org key (`single` mode only; checked in
   * lib/brought-resources.ts). Nothing is created then.
   * @default - a secret created here with a placeholder
   */
  readonly orgKeySecret?: ISecret;
}

const API_LABELS: Record<VendorApiName, string> = {
  scan: 'scanning API',
  keys: 'key-management API',
  breach: 'breach-report API',
};

/**
 * The Secrets Manager secret(s) holding the vendor's organisation API key.
 *
 * The key never enters the template: each secret is created with a generated placeholder (a JSON
 * object without `apiKey`, so a handler fails with a clear error rather than sending a random
 * string to the vendor) and the operator puts the real key in after the first deploy.
 */
export class VendorSecrets extends Construct {
  /** How the key(s) are stored. */
  public readonly mode: VendorKeyMode;
  /** Every secret this construct created (one, three in per-api mode, none when brought). */
  public readonly secrets: readonly Secret[];
  private readonly byApi: Record<VendorApiName, ISecret>;

  constructor(scope: Construct, id: string, props: VendorSecretsProps = {}) {
    super(scope, id);
    const mode = props.mode ?? 'single';
    if (mode !== 'single' && mode !== 'per-api') {
      throw new Error(`VendorSecrets ${id}: mode must be 'single' or 'per-api' (got '${String(mode)}')`);
    }
    this.mode = mode;

    if (props.orgKeySecret !== undefined && mode !== 'single') {
      throw new Error(`VendorSecrets ${id}: orgKeySecret is for mode 'single' only (got '${mode}')`);
    }
    if (mode === 'single') {
      // One secret serves every API: the team's own, or one created here.
      const orgKey =
        props.orgKeySecret ??
        this.createSecret('OrgApiKey', 'all three vendor APIs (scanning, key management, breach reports)');
      this.byApi = { scan: orgKey, keys: orgKey, breach: orgKey };
    } else {
      this.byApi = {
        scan: this.createSecret('ScanApiKey', `the vendor ${API_LABELS.scan}`),
        keys: this.createSecret('KeysApiKey', `the vendor ${API_LABELS.keys}`),
        breach: this.createSecret('BreachApiKey', `the vendor ${API_LABELS.breach}`),
      };
    }
    this.secrets =
      props.orgKeySecret === undefined ? [...new Set(Object.values(this.byApi) as Secret[])] : [];
  }

  /**
   * Records why a secret has no rotation schedule (cdk-nag AwsSolutions-SMG4). Called by the stack
   * for every secret the KeyRotation construct does not rotate.
   */
  public acknowledgeNotRotated(secret: ISecret, reason: string): void {
    acknowledge(secret, 'AwsSolutions-SMG4', reason);
  }

  /** The secret that holds the key for `api` (the same one for all APIs in single mode). */
  public secretFor(api: VendorApiName): ISecret {
    return this.byApi[api];
  }

  private createSecret(id: string, usedFor: string): Secret {
    return new Secret(this, id, {
      // Deleting the stack must never delete the key: the vendor holds no copy we could get back
      // without rotating, and every integration reading it would lose access.
      removalPolicy: RemovalPolicy.RETAIN,
      description:
        `Vendor organisation API key for ${usedFor}. Created with a placeholder: after deploying, run ` +
        `aws secretsmanager put-secret-value --secret-id <this secret's ARN> --secret-string file://key.json ` +
        'with {"apiKey":"<key>","orgUuid":"<org uuid>"} in key.json (docs/runbooks/key-rotation.md). ' +
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
