/**
 * The environment variables of one vendor API, named from the API's name by one rule, so the
 * platform lists no API: `scan` reads `SCAN_API_URL` and `SCAN_API_KEY_SECRET_ARN`. The CDK
 * bindings set them and the handlers read them through this function, as with ENV
 * (variables.ts). Plain code with no imports but a type: the CDK app, the handlers and the local
 * runner all load it.
 */

export interface VendorApiVariables {
  /** The API's base URL, e.g. `SCAN_API_URL`. */
  readonly url: string;
  /**
   * The API's own key secret (per-api mode), e.g. `SCAN_API_KEY_SECRET_ARN`; when unset, the org
   * key's (`ENV.vendorKeySecretArn`) serves it.
   */
  readonly keySecretArn: string;
}

/** Lower-case words joined by `-`: upper-cased, with `_` for `-`, they make a variable name. */
const API_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** The variables of `api`: its upper-cased name (`-` as `_`) and `_API_URL` / `_API_KEY_SECRET_ARN`. */
export function vendorApiVariables(api: string): VendorApiVariables {
  if (!API_NAME.test(api)) {
    throw new Error(
      `vendor API name '${api}' must be lower-case words joined by '-' (it names environment variables)`,
    );
  }
  const prefix = `${api.replaceAll('-', '_').toUpperCase()}_API`;
  return { url: `${prefix}_URL`, keySecretArn: `${prefix}_KEY_SECRET_ARN` };
}
