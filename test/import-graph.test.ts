// The house is one-way (README, Architecture): every import of src/ points down the map below,
// and no module reaches itself through its imports. Read from the source text (type-only imports
// count: a type is a fact one module learns from another), so a back-import or a cycle fails here
// the day it is written, not the day someone trips over it.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * The layers, top first: a module may import from its own folder, its own layer and the layers
 * below. A path is placed by the longest prefix that names it. A folder of src/ not named here is
 * a domain at the top of the domains (a new resource: it may use every domain below, none uses
 * it); a file of src/ not named here is ground, with the modules every layer reads.
 */
/** Stands for every handlers module, wherever its feature's folder is. */
const HANDLERS = '(handlers)';
const isHandlers = (file: string) => /(^|[/-])handlers\.ts$/.test(file);
/** Stands for every feature's `feature.ts`: what it builds and serves, registered in src/features.ts. */
const FEATURE = '(feature)';
const isFeature = (file: string) => /(^|\/)feature\.ts$/.test(file);
/** The edge of a feature's folder: what only the composition above it may use. */
const isEdge = (file: string) => isHandlers(file) || isFeature(file);

const LAYERS: readonly (readonly string[])[] = [
  // Entry points: they see every layer and wire them (src/cluster.ts: the primary of WORKERS processes).
  ['src/main.ts', 'src/cluster.ts', 'src/cli/'],
  // The composition root (every service built once, the handler map) and the registry of features.
  ['src/composition.ts'],
  ['src/features.ts'],
  // Every feature's `feature.ts`: its own services and its handlers, for the composition.
  [FEATURE],
  // Every feature's handlers (a `handlers.ts`, or `<name>-handlers.ts`, in the feature's folder):
  // the edge of that feature, above the HTTP machinery they use and every domain.
  [HANDLERS],
  // The HTTP edge (with the handlers' types, derived from the contract); the platform's services
  // the handlers are handed (built once; the composition root adds each feature's own).
  ['src/http/'],
  ['src/services.ts'],
  // (new domains: here)
  // The domains, each using only those below it.
  // Who may call how often, and each key's use: above every domain whose callers it limits.
  ['src/limits/admission/'],
  ['src/maintenance/'],
  // Provisioning people from a company's directory (SCIM 2.0).
  ['src/scim/'],
  // The authentication wing, its rooms from the one that uses most to the one that uses least.
  // Company sign-in (docs/IDENTITY.md): opens sessions; its client secrets are re-sealed by maintenance.
  ['src/auth/identity-providers/'],
  // Webhook endpoints and delivery: placed here so the maintenance step can re-seal their secrets.
  ['src/webhooks/'],
  ['src/auth/sessions/'],
  ['src/auth/second-factors/'],
  ['src/auth/throttle/'],
  ['src/users/'],
  ['src/api-keys/'],
  ['src/roles/'],
  ['src/audit/'],
  // The outbox of mail (templates, the sender, security notices): every change's transaction may
  // write a message, the audit recorder's security notices included.
  ['src/mail/'],
  // Creates made once per Idempotency-Key (asked by the handlers of creates), and revisions and
  // preconditions (docs/SAFE-WRITES.md): asked by every changeable resource's service, and read by
  // their repositories.
  ['src/idempotency/', 'src/revisions/'],
  // Who is calling and what they may do: the principal, the permission catalogue (read from the
  // contract; a role's revision digests it); passwords and secrets, hashed or sealed.
  ['src/auth/'],
  ['src/auth/secrets/'],
  // In-process rate limiting reconciled through PostgreSQL: what a principal's limit is.
  ['src/limits/'],
  ['src/pagination/'],
  ['src/text/'],
  // The contract document and what is read from it alone: validators, key styles, path aliases.
  ['src/contract/'],
  // Ground: errors, clock, configuration, paths; then the database.
  ['(ground)'],
  ['src/db/'],
];
const NEW_DOMAINS = LAYERS.findIndex((layer) => layer.includes('src/maintenance/'));
const GROUND = LAYERS.findIndex((layer) => layer.includes('(ground)'));

/** Rank of a file: its layer's index (0 is the top). */
function rankOf(file: string): number {
  if (isFeature(file)) return LAYERS.findIndex((layer) => layer.includes(FEATURE));
  if (isHandlers(file)) return LAYERS.findIndex((layer) => layer.includes(HANDLERS));
  let best: { rank: number; length: number } | undefined;
  LAYERS.forEach((layer, rank) => {
    for (const prefix of layer) {
      if ((file === prefix || (prefix.endsWith('/') && file.startsWith(prefix))) && prefix.length > (best?.length ?? -1)) best = { rank, length: prefix.length };
    }
  });
  if (best) return best.rank;
  return file.split('/').length > 2 ? NEW_DOMAINS - 0.5 : GROUND;
}

/**
 * A domain's repository.ts is the database tier of that domain: besides its own folder it reads
 * only what sits at or below the shared machinery of writes (revisions, idempotency) and the auth
 * catalogue (a repository that calls up into a domain's rules has its layers upside down).
 */
const REPOSITORY_FLOOR = LAYERS.findIndex((layer) => layer.includes('src/revisions/'));

function sourceFiles(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The src/ files a file imports (relative specifiers; `.js` written for the `.ts` source). */
function importsOf(file: string, text = readFileSync(join(ROOT, file), 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  // Every `import … from`, `export … from` (`export * as x from` included) and `import('…')`.
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) specifiers.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers
    .filter((name) => name.startsWith('.'))
    .map((name) => relative(ROOT, resolve(ROOT, dirname(file), name)).replace(/\.js$/, '.ts'))
    .filter((target) => target.startsWith('src/'));
}

function graphOf(files: readonly string[], read: (file: string) => string[] = (f) => importsOf(f)): Map<string, string[]> {
  return new Map(files.map((file) => [file, read(file)]));
}

const folderOf = (file: string) => dirname(file);

/** Every import that points up the map, as `from -> to`. */
function backImports(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      // A feature's folder holds its edge too: nothing in it but its edge (handlers, feature.ts) uses its edge.
      if (folderOf(from) === folderOf(to) && (isEdge(from) || !isEdge(to)) && !(isHandlers(from) && isFeature(to))) continue;
      const upward = rankOf(to) < rankOf(from);
      const repositoryReachesUp = from.endsWith('/repository.ts') && rankOf(to) < REPOSITORY_FLOOR;
      if (upward || repositoryReachesUp) found.push(`${from} -> ${to}`);
    }
  }
  return found.sort();
}

/** Every cycle of the graph, once each, as the files around it (strongly connected components). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const to of graph.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the import graph of src/', () => {
  const graph = graphOf(sourceFiles());

  it('reads every import (a check that sees nothing would pass anything)', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/services.ts')).toContain('src/users/service.ts');
    expect(graph.get('src/features.ts')).toContain('src/tasks/feature.ts');
    expect(importsOf('src/x/a.ts', "import type { T } from '../y/b.js';\nexport { u } from './c.js';")).toEqual(['src/y/b.ts', 'src/x/c.ts']);
  });

  it('has no import pointing up the map (HTTP edge -> domain -> database)', () => {
    expect(backImports(graph)).toEqual([]);
  });

  it('has no cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('catches what it is for: a back-import, a repository reaching up, a cycle, and a new domain placed on top', () => {
    const made = new Map([
      ['src/users/service.ts', ['src/auth/sessions/revocation.ts']],
      ['src/auth/sessions/repository.ts', ['src/auth/throttle/sign-in-throttle.ts']],
      ['src/contract/styled.ts', ['src/http/inflection.ts']],
      ['src/audit/cursor.ts', ['src/audit/repository.ts']],
      ['src/audit/repository.ts', ['src/audit/cursor.ts']],
      ['src/tasks/service.ts', ['src/users/repository.ts']],
      ['src/users/names.ts', ['src/tasks/service.ts']],
      ['src/tasks/service.ts', ['src/tasks/handlers.ts']],
      ['src/http/router.ts', ['src/tasks/handlers.ts']],
    ]);
    expect(backImports(made)).toEqual([
      'src/auth/sessions/repository.ts -> src/auth/throttle/sign-in-throttle.ts',
      'src/contract/styled.ts -> src/http/inflection.ts',
      'src/http/router.ts -> src/tasks/handlers.ts',
      'src/tasks/service.ts -> src/tasks/handlers.ts',
      'src/users/names.ts -> src/tasks/service.ts',
      'src/users/service.ts -> src/auth/sessions/revocation.ts',
    ]);
    expect(cycles(made)).toEqual([['src/audit/cursor.ts', 'src/audit/repository.ts']]);
  });
});
