/**
 * Type-checks a consumer app's compilations as `tsc -p <tsconfig>` would, one after the other in
 * one process, and prints, as JSON, each tsconfig's diagnostics as tsc's lines (`--pretty false`,
 * paths from the app's folder), wherever they are: in the app's files or in a declaration file.
 *
 * Usage: node --import tsx test/package/consumer-typecheck.ts APP_DIR PACKAGE TSCONFIG...
 *
 * With `skipLibCheck` off, each compilation checks every declaration file it reaches, aws-cdk-lib's
 * 2,600 among them: three compilations in one `tsc --build` spent 14 s of CPU checking, nearly all
 * of it on those files, each checked three times. The first compilation here checks every file, as
 * tsc does. A later one checks what this app's module settings can change that PACKAGE is
 * answerable for: the app's own files, PACKAGE's declarations and those of the packages only
 * PACKAGE brings. The files every CDK app reaches without PACKAGE (the app's other dependencies
 * and what they bring, the compiler's libraries and the types the tsconfig names) it checks only
 * when no earlier compilation did: their errors would be there in any CDK app with those settings.
 * The programs share their parsed and bound files, as `tsc --build` shares them.
 */
import { readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { type LockEntry, lockClosure } from './consumer-app.ts';

const [appArgument, packageName, ...configs] = process.argv.slice(2);
if (appArgument === undefined || packageName === undefined || configs.length === 0) {
  throw new Error('usage: consumer-typecheck.ts APP_DIR PACKAGE TSCONFIG...');
}
const appDir = resolve(appArgument);

/** Parsed files by name and parse settings: each later program reuses them, bound once. */
const parsed = new Map<string, ts.SourceFile>();
/** The files every CDK app reaches that some compilation has checked. */
const checked = new Set<string>();

const manifest = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(appDir, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};
/** Each installed package's folder (`node_modules/…`, nested ones too), longest first. */
const installed = Object.keys(lock.packages)
  .filter((path) => path !== '')
  .sort((a, b) => b.length - a.length);
/**
 * The installed packages the app's other dependencies bring, and PACKAGE's own dependencies do not
 * (its peers are the app's dependencies).
 */
const withoutThePackage = (() => {
  const others = Object.keys(manifest.dependencies).filter((name) => name !== packageName);
  const own = Object.keys(lock.packages[`node_modules/${packageName}`]?.dependencies ?? {});
  const ours = lockClosure(lock.packages, own);
  return new Set([...lockClosure(lock.packages, others).keys()].filter((path) => !ours.has(path)));
})();

/** Whether every CDK app with these settings reaches `fileName`, whether or not it installs PACKAGE. */
function everyAppReaches(fileName: string): boolean {
  const path = relative(appDir, resolve(fileName)).split(sep).join('/');
  // The compiler's libraries and the tsconfig's types (this repository's copies stand in for them).
  if (path.startsWith('../')) return true;
  const owner = installed.find((folder) => path.startsWith(`${folder}/`));
  return owner !== undefined && withoutThePackage.has(owner);
}

function hostFor(options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options);
  const parse = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, settings, onError, shouldCreate) => {
    // A file parses alike wherever its language version and module format (ES or CommonJS) are the same.
    const key =
      typeof settings === 'object'
        ? `${fileName}|${settings.languageVersion}|${settings.impliedNodeFormat}|${settings.jsDocParsingMode}`
        : `${fileName}|${settings}`;
    const known = parsed.get(key);
    if (known !== undefined) return known;
    const file = parse(fileName, settings, onError, shouldCreate);
    if (file !== undefined) parsed.set(key, file);
    return file;
  };
  return host;
}

/** The compilation's diagnostics: of every file when `everyFile`, else as the header says. */
function typecheck(configPath: string, everyFile: boolean): ts.Diagnostic[] {
  const config = ts.getParsedCommandLineOfConfigFile(configPath, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (config === undefined) throw new Error(`cannot read ${configPath}`);
  const program = ts.createProgram({
    rootNames: config.fileNames,
    options: config.options,
    host: hostFor(config.options),
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config),
  });
  const toCheck = program
    .getSourceFiles()
    .filter((file) => everyFile || !everyAppReaches(file.fileName) || !checked.has(file.fileName));
  for (const file of toCheck) if (everyAppReaches(file.fileName)) checked.add(file.fileName);
  const diagnostics = everyFile
    ? [...ts.getPreEmitDiagnostics(program)]
    : toCheck.flatMap((file) => ts.getPreEmitDiagnostics(program, file));
  // Emitting the whole program would check every file first; emitting file by file checks only
  // what each emitted file needs.
  const emitted = everyFile
    ? program.emit().diagnostics
    : toCheck.filter((file) => !file.isDeclarationFile).flatMap((file) => program.emit(file).diagnostics);
  return [...diagnostics, ...emitted];
}

const format: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (fileName) => fileName,
  getCurrentDirectory: () => appDir,
  getNewLine: () => '\n',
};
const errors = Object.fromEntries(
  configs.map((config, index) => {
    const diagnostics = ts.sortAndDeduplicateDiagnostics(typecheck(resolve(appDir, config), index === 0));
    const lines = ts.formatDiagnostics(diagnostics, format).split('\n');
    return [config, lines.filter((line) => line.trim() !== '')];
  }),
);
process.stdout.write(`${JSON.stringify(errors)}\n`);
