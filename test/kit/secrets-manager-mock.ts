/**
 * The Secrets Manager stand-in (local/services/secrets-manager/stand-in.ts) behind aws-sdk-client-mock:
 * every SecretsManagerClient in this test process talks to `store`, with the SDK's own command
 * classes and exception types.
 */
import {
  CreateSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  RotateSecretCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { SecretsManagerStandIn } from '#local/services/secrets-manager/stand-in';

export function mockSecretsManager(store = new SecretsManagerStandIn()) {
  const mock = mockClient(SecretsManagerClient);
  // The stand-in returns each operation's output shape; the mock types them per command.
  const via =
    (operation: Parameters<SecretsManagerStandIn['handle']>[0]) =>
    async (input: object): Promise<never> =>
      store.handle(operation, input as Record<string, unknown>) as never;
  mock.on(CreateSecretCommand).callsFake(via('CreateSecret'));
  mock.on(DescribeSecretCommand).callsFake(via('DescribeSecret'));
  mock.on(GetSecretValueCommand).callsFake(via('GetSecretValue'));
  mock.on(PutSecretValueCommand).callsFake(via('PutSecretValue'));
  mock.on(UpdateSecretVersionStageCommand).callsFake(via('UpdateSecretVersionStage'));
  mock.on(RotateSecretCommand).callsFake(via('RotateSecret'));
  mock.on(ListSecretVersionIdsCommand).callsFake(via('ListSecretVersionIds'));
  return { mock, store };
}
