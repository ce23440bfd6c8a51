/**
 * The Secrets Manager stand-in keeps the service's rules for versions and labels, through both ways
 * the project reaches it: aws-sdk-client-mock (the tests) and its loopback server in the service's
 * wire protocol (`npm start -- rotate`). The same SDK calls, the same answers.
 */
import {
  CreateSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  RotateSecretCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { afterEach, describe, expect, it } from 'vitest';
import { startSecretsManagerServer } from '#local/services/secrets-manager/server';
import { mockSecretsManager } from '../kit/secrets-manager-mock.ts';

const TOKEN_A = '11111111-1111-4111-8111-111111111111';
const TOKEN_B = '22222222-2222-4222-8222-222222222222';
const LAMBDA = 'arn:aws:lambda:eu-west-1:000000000000:function:rotate';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const ADAPTERS = {
  'aws-sdk-client-mock': async () => {
    const { mock } = mockSecretsManager();
    cleanups.push(() => mock.restore());
    return new SecretsManagerClient({ region: 'eu-west-1' });
  },
  'loopback server': async () => {
    const server = await startSecretsManagerServer();
    const client = new SecretsManagerClient({
      endpoint: server.url,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
    cleanups.push(() => server.close());
    return client;
  },
};

describe.each(Object.entries(ADAPTERS))('Secrets Manager stand-in via %s', (_name, connect) => {
  async function secretWith(value: string) {
    const client = await connect();
    const created = await client.send(new CreateSecretCommand({ Name: 'org-key', SecretString: value }));
    const stages = async () =>
      (await client.send(new DescribeSecretCommand({ SecretId: 'org-key' }))).VersionIdsToStages ?? {};
    return { client, id: created.ARN as string, first: created.VersionId as string, stages };
  }

  it('RotateSecret stages a value-less AWSPENDING version that cannot be read, and refuses a second one', async () => {
    const { client, id, first, stages } = await secretWith('old');
    const rotated = await client.send(
      new RotateSecretCommand({ SecretId: id, ClientRequestToken: TOKEN_A, RotationLambdaARN: LAMBDA }),
    );
    expect(rotated.VersionId).toBe(TOKEN_A);
    expect(await stages()).toEqual({ [first]: ['AWSCURRENT'], [TOKEN_A]: ['AWSPENDING'] });
    await expect(
      client.send(new GetSecretValueCommand({ SecretId: id, VersionStage: 'AWSPENDING' })),
    ).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    await expect(
      client.send(new RotateSecretCommand({ SecretId: id, ClientRequestToken: TOKEN_B })),
    ).rejects.toMatchObject({
      name: 'InvalidRequestException',
      message: expect.stringContaining("A previous rotation isn't complete"),
    });
  });

  it('PutSecretValue fills the pending version once; the same value again is a no-op, a different one ResourceExistsException', async () => {
    const { client, id } = await secretWith('old');
    await client.send(
      new RotateSecretCommand({ SecretId: id, ClientRequestToken: TOKEN_A, RotationLambdaARN: LAMBDA }),
    );
    const put = (value: string) =>
      client.send(
        new PutSecretValueCommand({
          SecretId: id,
          ClientRequestToken: TOKEN_A,
          SecretString: value,
          VersionStages: ['AWSPENDING'],
        }),
      );
    await put('new');
    await expect(put('new')).resolves.toMatchObject({ VersionId: TOKEN_A });
    await expect(put('other')).rejects.toMatchObject({ name: 'ResourceExistsException' });
    const pending = await client.send(
      new GetSecretValueCommand({ SecretId: id, VersionStage: 'AWSPENDING' }),
    );
    expect(pending).toMatchObject({ SecretString: 'new', VersionId: TOKEN_A });
  });

  it('UpdateSecretVersionStage moves AWSCURRENT (leaving AWSPREVIOUS) only when told where it is', async () => {
    const { client, id, first, stages } = await secretWith('old');
    await client.send(
      new RotateSecretCommand({ SecretId: id, ClientRequestToken: TOKEN_A, RotationLambdaARN: LAMBDA }),
    );
    await client.send(
      new PutSecretValueCommand({
        SecretId: id,
        ClientRequestToken: TOKEN_A,
        SecretString: 'new',
        VersionStages: ['AWSPENDING'],
      }),
    );
    const move = (from?: string) =>
      client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: id,
          VersionStage: 'AWSCURRENT',
          MoveToVersionId: TOKEN_A,
          ...(from === undefined ? {} : { RemoveFromVersionId: from }),
        }),
      );
    await expect(move()).rejects.toMatchObject({ name: 'InvalidParameterException' });
    await expect(move(TOKEN_B)).rejects.toMatchObject({ name: 'InvalidParameterException' });
    await move(first);
    // The AWS samples' known bug: moving AWSCURRENT alone leaves AWSPENDING on the new version too.
    expect(await stages()).toEqual({ [first]: ['AWSPREVIOUS'], [TOKEN_A]: ['AWSCURRENT', 'AWSPENDING'] });
    await client.send(
      new UpdateSecretVersionStageCommand({
        SecretId: id,
        VersionStage: 'AWSPENDING',
        RemoveFromVersionId: TOKEN_A,
      }),
    );
    expect(await stages()).toEqual({ [first]: ['AWSPREVIOUS'], [TOKEN_A]: ['AWSCURRENT'] });
    const described = await client.send(new DescribeSecretCommand({ SecretId: id }));
    expect(described.LastRotatedDate).toBeInstanceOf(Date);
    expect((await client.send(new GetSecretValueCommand({ SecretId: id }))).SecretString).toBe('new');
  });

  it('names a missing secret with ResourceNotFoundException', async () => {
    const client = await connect();
    await expect(client.send(new DescribeSecretCommand({ SecretId: 'nope' }))).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
  });
});
