import { build } from 'esbuild';

const entry = process.argv[2];
const r = await build({
  entryPoints: [entry],
  bundle: true,
  platform: 'node',
  format: 'esm',
  minify: true,
  target: 'node22',
  mainFields: ['module', 'main'],
  write: false,
  metafile: true,
  outfile: '/tmp/x/index.mjs',
  logLevel: 'error',
  banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
});
const out = Object.values(r.metafile.outputs).find((o) => o.entryPoint);
const groups = {};
for (const [f, v] of Object.entries(out.inputs)) {
  const m = f.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
  const k = m ? m[1] : f.split('/').slice(0, 3).join('/');
  groups[k] = (groups[k] || 0) + v.bytesInOutput;
}
console.log('total', (out.bytes / 1024).toFixed(0));
for (const [k, v] of Object.entries(groups)
  .sort((a, b) => b[1] - a[1])
  .slice(0, +process.argv[3] || 25))
  console.log((v / 1024).toFixed(1).padStart(8), k);
