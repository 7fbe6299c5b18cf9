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
    operation.summary = `${original.summary} (${language} path)`;
    operation.description = `${language} name of \`${method.toUpperCase()} ${of}\`; same behaviour.\n${original.description ?? ''}`;
    copy[method] = operation;
  }
  return copy;
}
