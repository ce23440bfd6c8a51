import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { fromEnv } from '@aws-sdk/credential-providers';
export const s = new S3Client({});
export const handler = async () => s.send(new GetObjectCommand({ Bucket: 'a', Key: 'b' }));
