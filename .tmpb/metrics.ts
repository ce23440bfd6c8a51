import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
export const m = new Metrics({ namespace: 'x' });
export const l = new Logger();
export const handler = async () => m.publishStoredMetrics();
