/**
 * What a pipeline decides for all of its functions (SecurityPipeline's `lambdaRuntime` and
 * `lambdaSourceMaps`), recorded on the pipeline's construct and read by each PipelineFunction
 * created under it, so two pipelines in one app may choose differently.
 */
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { DEFAULT_PIPELINE_CONFIG } from '../config/defaults.ts';
import type { LambdaRuntimeName } from '../config/schema.ts';

/** Each runtime the `lambdaRuntime` setting offers, and the esbuild target its bundles are built for. */
export const LAMBDA_RUNTIME_SETTINGS: Readonly<
  Record<LambdaRuntimeName, { readonly runtime: Runtime; readonly esbuildTarget: string }>
> = {
  'nodejs24.x': { runtime: Runtime.NODEJS_24_X, esbuildTarget: 'node24' },
  'nodejs22.x': { runtime: Runtime.NODEJS_22_X, esbuildTarget: 'node22' },
};

export interface FunctionSettings {
  /** The Lambda runtime; the esbuild target of a bundle built at synth follows it. */
  readonly runtime: LambdaRuntimeName;
  /** Ship source maps and run with `--enable-source-maps`. */
  readonly sourceMaps: boolean;
}

const settings = new WeakMap<IConstruct, FunctionSettings>();

/** Every PipelineFunction under `scope` takes these settings (unless its own props say otherwise). */
export function setFunctionSettings(scope: IConstruct, chosen: FunctionSettings): void {
  settings.set(scope, chosen);
}

/** The settings of a function created under `scope`: the nearest setFunctionSettings, else the defaults. */
export function functionSettingsOf(scope: IConstruct): FunctionSettings {
  for (const ancestor of [...scope.node.scopes].reverse()) {
    const found = settings.get(ancestor);
    if (found !== undefined) return found;
  }
  return {
    runtime: DEFAULT_PIPELINE_CONFIG.lambdaRuntime,
    sourceMaps: DEFAULT_PIPELINE_CONFIG.lambdaSourceMaps,
  };
}
