/**
 * What each handler's bundle pulls in, bundled as the CDK app bundles it (PIPELINE_BUNDLING). All
 * assertions on bundle contents live in this one file so that a test run bundles once: the kit
 * memoises per process, and vitest runs the cdk and unit projects in different worker processes.
 */
import { describe, expect, it } from 'vitest';
import { declarationOf, HANDLERS, type HandlerFile } from '../../lambdas/registry.ts';
import { PIPELINE_BUNDLING } from '../../lib/platform/pipeline-function.ts';
import { handlerBundle, packagesOf } from '../kit/handler-bundles.ts';

/** Every handler the workflows register (lambdas/registry.ts). */
const HANDLER_FILES = Object.keys(HANDLERS) as HandlerFile[];

/** Mini with the English locale measures at most about 27 KiB per handler; classic was about 444 KiB. */
const ZOD_BUDGET_BYTES = 40 * 1024;

/** Bytes each zod file contributes to the handler's output. */
async function zodInputs(handler: string): Promise<Map<string, number>> {
  const { bytesInOutput } = await handlerBundle(handler);
  return new Map([...bytesInOutput].filter(([path]) => path.includes('node_modules/zod/')));
}

describe('schemas on zod/mini', () => {
  it('bundles no classic zod into any handler, and zod adds at most 40 KiB to each', async () => {
    // Prepare
    const handlers = Object.keys(HANDLERS).sort();
    expect(handlers).toContain('write-scan-manifest');

    // Act
    const figures = [];
    for (const file of handlers) {
      const inputs = await zodInputs(file);
      figures.push({
        handler: file,
        classicFiles: [...inputs.keys()].filter((path) => path.includes('/v4/classic/')),
        zodBytes: [...inputs.values()].reduce((sum, bytes) => sum + bytes, 0),
      });
    }

    // Assess
    for (const figure of figures) {
      expect(figure, figure.handler).toMatchObject({ classicFiles: [] });
      expect(figure.zodBytes, figure.handler).toBeLessThanOrEqual(ZOD_BUDGET_BYTES);
    }
  });
});

describe('bundles (PIPELINE_BUNDLING, as bench/bundles.ts bundles them)', () => {
  it.each(
    // rotate-api-key declares no vendor API: it calls the keys API inside the rotation protocol.
    HANDLER_FILES.filter(
      (file) => HANDLERS[file].vendorApis.length === 0 && declarationOf(file).rotatedSecret !== 'rotate',
    ),
  )(
    'bundles no vendor transport into %s, which declares no vendor API and only talks to AWS',
    async (handlerFile) => {
      // Act
      const { inputs } = await handlerBundle(handlerFile);
      // Assess
      expect(inputs.some((path) => path.includes('@aws-sdk/client-'))).toBe(true);
      // The bounded JSON reader beside the transport parses S3 objects too; the transport itself is
      // every other module of the folder.
      const transport = inputs.filter(
        (path) =>
          path.startsWith('lambdas/vendor-api/transport/') && path !== 'lambdas/vendor-api/transport/json.ts',
      );
      expect(transport).toEqual([]);
      expect(inputs.filter((path) => path.includes('node_modules/undici/'))).toEqual([]);
    },
  );

  it.each(
    HANDLER_FILES.filter((file) => HANDLERS[file].s3.length === 0 && HANDLERS[file].vendorApis.length > 0),
  )('bundles no S3 client into %s, which lambdas/registry.ts gives no object access', async (handlerFile) => {
    // Act
    const packages = packagesOf(await handlerBundle(handlerFile));
    // Assess
    expect(packages).not.toContain('@aws-sdk/client-s3');
    expect(packages).toContain('@aws-sdk/client-secrets-manager');
  });

  it('ships no source maps by default, and when a pipeline turns them on, none with sourcesContent', () => {
    expect(PIPELINE_BUNDLING.sourceMap).toBe(false);
    expect(PIPELINE_BUNDLING.sourcesContent).toBe(false);
  });
});
