import { z } from 'zod';

const s = z.object({ a: z.string(), b: z.number().min(1).optional() });
export const handler = async (e: unknown) => s.parse(e);
