/** The pause switch from PAUSE_PARAMETER_NAME: SSM Parameter Store, cached 10 s by Powertools. */
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import { SSMClient } from '@aws-sdk/client-ssm';
import { type PauseSwitch, pauseSwitch } from '#lambdas/platform/runs/pause';
import { type Env, optionalEnv } from './env.ts';
import type { Observability } from './observability.ts';
import { ENV } from './variables.ts';

/** How long a read value is reused: a pause takes effect within this, a resume too. */
const PAUSE_CACHE_SECONDS = 10;

/** The switch, or undefined when the function has no PAUSE_PARAMETER_NAME (never paused). */
export function pauseSwitchFromEnvironment(env: Env, tools: Observability): PauseSwitch | undefined {
  const name = optionalEnv(env, ENV.pauseParameterName);
  if (name === undefined) return undefined;
  const provider = new SSMProvider({ awsSdkV3Client: tools.tracer.captureAWSv3Client(new SSMClient({})) });
  return pauseSwitch(name, async () => {
    const value = await provider.get(name, { maxAge: PAUSE_CACHE_SECONDS });
    return typeof value === 'string' ? value : undefined;
  });
}
