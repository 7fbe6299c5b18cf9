// Paths served under a second name (the French `/utilisateurs` and `/jetons`). The root document
// declares each once under `x-path-aliases`; bundling writes the alias as a copy of the original
// path's operations, so the two can never describe different behaviour (hand-written copies did).
import type { HttpMethod, JsonSchema, OpenApiDocument } from './spec.js';

export interface PathAlias {
  /** The path this one is another name of, e.g. `/users`. */
  of: string;
  /** The language of the name, for the summary and description, e.g. `French`. */
  language: string;
  /** The operations served under the alias: method -> the alias operation's own operationId. */
  operations: Partial<Record<HttpMethod, string>>;
}

export const PATH_ALIASES_KEY = 'x-path-aliases';

/** On an alias operation of the bundle: the operationId of the operation it is another name of. */
export const ALIAS_OF_KEY = 'x-alias-of';

/** The alias operationIds of a bundle, each with the operationId it stands for. */
export function aliasOperations(bundle: OpenApiDocument): Map<string, string> {
  const found = new Map<string, string>();
  for (const item of Object.values(bundle.paths)) {
    for (const operation of Object.values(item as Record<string, JsonSchema>)) {
      const of = (operation as { [ALIAS_OF_KEY]?: string })[ALIAS_OF_KEY];
      if (typeof of === 'string') found.set((operation as { operationId: string }).operationId, of);
    }
  }
  return found;
}

/** The bundle with every declared alias written into `paths` (right after its original) and the declaration removed. */
export function withPathAliases(bundle: OpenApiDocument): OpenApiDocument {
  const { [PATH_ALIASES_KEY]: declared, ...rest } = bundle as OpenApiDocument & { [PATH_ALIASES_KEY]?: Record<string, PathAlias> };
  const aliases = Object.entries(declared ?? {});
  for (const [alias, { of }] of aliases) {
    if (!bundle.paths[of]) throw new Error(`${PATH_ALIASES_KEY}: ${alias} is an alias of ${of}, which is not a path of the contract`);
    if (bundle.paths[alias]) throw new Error(`${PATH_ALIASES_KEY}: ${alias} is already a path of the contract`);
  }
  const paths: OpenApiDocument['paths'] = {};
  for (const [path, item] of Object.entries(bundle.paths)) {
    paths[path] = item;
    for (const [alias, spec] of aliases) if (spec.of === path) paths[alias] = aliasItem(alias, item, spec);
  }
  return { ...rest, paths } as OpenApiDocument;
}

function aliasItem(alias: string, item: Record<string, JsonSchema>, { of, language, operations }: PathAlias): Record<string, JsonSchema> {
  const copy: Record<string, JsonSchema> = {};
  if (item.parameters) copy.parameters = structuredClone(item.parameters);
  for (const [method, operationId] of Object.entries(operations)) {
    const original = item[method];
    if (!original) throw new Error(`${PATH_ALIASES_KEY}: ${alias} serves ${method.toUpperCase()}, which ${of} does not have`);
    const operation = structuredClone(original);
    operation.operationId = operationId;
    // The router serves the alias with the original's handler (src/http/router.ts).
    operation[ALIAS_OF_KEY] = original.operationId;
    operation.summary = `${original.summary} (${language} path)`;
    operation.description = `${language} name of \`${method.toUpperCase()} ${of}\`; same behaviour.\n${original.description ?? ''}`;
    copy[method] = operation;
  }
  return copy;
}
