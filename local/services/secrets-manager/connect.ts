/**
 * The Secrets Manager `npm start -- rotate` uses: the endpoint in AWS_ENDPOINT_URL_SECRETS_MANAGER
 * when set (any Secrets Manager-compatible service, with the SDK's usual credentials and region),
 * else the stand-in served on loopback, so the real SDK client talks to it either way.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { startSecretsManagerServer } from './server.ts';

export const SECRETS_MANAGER_ENDPOINT_VARIABLE = 'AWS_ENDPOINT_URL_SECRETS_MANAGER';

export interface SecretsManagerConnection {
  readonly client: SecretsManagerClient;
  readonly label: string;
  /** True for the in-memory stand-in: what it holds is gone when the command ends. */
  readonly ephemeral: boolean;
  close(): Promise<void>;
}

export async function connectSecretsManager(env: NodeJS.ProcessEnv): Promise<SecretsManagerConnection> {
  const endpoint = env[SECRETS_MANAGER_ENDPOINT_VARIABLE]?.trim();
  if (endpoint) {
    // The SDK reads the endpoint variable itself; only a region may be missing on a laptop.
    const client = new SecretsManagerClient(
      env.AWS_REGION || env.AWS_DEFAULT_REGION ? {} : { region: 'us-east-1' },
    );
    return {
      client,
      label: `Secrets Manager at ${endpoint}`,
      ephemeral: false,
      close: async () => client.destroy(),
    };
  }
  const server = await startSecretsManagerServer();
  const client = new SecretsManagerClient({
    endpoint: server.url,
    region: server.store.region,
    // The stand-in checks no signature; these only let the SDK sign as it always does.
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    client,
    label: `Secrets Manager stand-in at ${server.url} (in memory)`,
    ephemeral: true,
    close: async () => {
      client.destroy();
      await server.close();
    },
  };
}
