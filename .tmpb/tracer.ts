import { Tracer } from '@aws-lambda-powertools/tracer';
export const t = new Tracer({ serviceName: 'x' });
export const handler = async () => t.getSegment();
