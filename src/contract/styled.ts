// The contract as a client of one x-api-inflection style sees it, derived from the bundled
// snake_case contract: property names, `required` entries, examples (keys only) and the
// inflection header itself are written in that style. `make generate` writes one bundle per style
// (generated/openapi.<style>.json) for Prism, openapi-typescript and Redoc; the service derives the
// same documents at start-up to serve them and to validate the bodies it sends.
//
// Keys are renamed by the inflector's own rule (styleKey), and examples are walked by the inflector
// itself, so a free-form map keeps its keys here exactly as it does on the wire. Schema keywords
// the inflector does not follow are refused, so the two can never silently disagree.
import { INFLECTION_HEADER, INFLECTIONS, KeyInflector, hasFixedKeys, styleKey, unstyleKey, type Inflection } from './inflection.js';
import { HTTP_METHODS, type JsonSchema, type OpenApiDocument } from './spec.js';

export type StyledContracts = Record<Inflection, OpenApiDocument>;

/** How each style is named to readers. */
export const STYLE_NAMES: Record<Inflection, string> = { snake: 'snake_case', camel: 'camelCase', dash: 'kebab-case', pascal: 'PascalCase' };

/**
 * Keywords that name or select object keys in ways KeyInflector does not follow (it reads
 * `properties`, `additionalProperties`, `items` and the allOf/anyOf/oneOf branches). A contract
 * using one needs the inflector taught first.
 */
const UNSUPPORTED = ['patternProperties', 'propertyNames', 'dependentRequired', 'dependentSchemas', 'unevaluatedProperties', 'discriminator', 'prefixItems', 'contains', 'if', 'then', 'else', 'not'];
/** Keywords whose value is one schema, or a list of schemas. */
const SUBSCHEMA = ['items', 'additionalProperties'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];
/** Keywords whose value is an instance of the schema (keys styled, values kept). */
const INSTANCE = ['example', 'default', 'const'];
/** Where a document holds values rather than descriptions. */
const VALUES = new Set([...INSTANCE, 'examples', 'enum', 'value']);

export class UnstylableContractError extends Error {
  override name = 'UnstylableContractError';
}

/** Documents are never changed once loaded, so each is styled once however many apps use it. */
const derived = new WeakMap<OpenApiDocument, StyledContracts>();

/** The four contracts; `snake` is the bundle itself. */
export function styledContracts(spec: OpenApiDocument): StyledContracts {
  let result = derived.get(spec);
  if (!result) {
    result = { snake: spec } as StyledContracts;
    for (const style of INFLECTIONS) if (style !== 'snake') result[style] = styleContract(spec, style);
    derived.set(spec, result);
  }
  return result;
}

export function styleContract(spec: OpenApiDocument, style: Inflection): OpenApiDocument {
  if (style === 'snake') return spec;
  return new ContractStyler(spec, style).run();
}

class ContractStyler {
  private readonly inflector: KeyInflector;
  /** Names that are body keys somewhere, and names that are parameters (left alone in prose). */
  private readonly propertyNames = new Set<string>();
  private readonly parameterNames = new Set<string>();

  constructor(
    private readonly spec: OpenApiDocument,
    private readonly style: Inflection,
  ) {
    this.inflector = new KeyInflector(spec);
  }

  run(): OpenApiDocument {
    this.collectNames(this.spec);
    const out = structuredClone(this.spec);
    const components = this.spec.components ?? {};
    for (const [name, schema] of Object.entries<JsonSchema>(components.schemas ?? {})) {
      out.components.schemas[name] = this.schema(schema, `#/components/schemas/${name}`);
    }
    for (const [name, response] of Object.entries<JsonSchema>(components.responses ?? {})) {
      out.components.responses[name] = this.withContent(response, `#/components/responses/${name}`);
    }
    for (const [name, body] of Object.entries<JsonSchema>(components.requestBodies ?? {})) {
      out.components.requestBodies[name] = this.withContent(body, `#/components/requestBodies/${name}`);
    }
    for (const [name, parameter] of Object.entries<JsonSchema>(components.parameters ?? {})) {
      out.components.parameters[name] = this.parameter(parameter);
    }
    if (components.examples && Object.keys(components.examples).length > 0) {
      throw new UnstylableContractError('components.examples: an example used by $ref has no schema to style its keys by; write it inline');
    }
    // Paths, and the events of `webhooks` (path items too: a POST the service sends, styled as an endpoint's key_style asks).
    const items: [string, JsonSchema, JsonSchema][] = [
      ...Object.entries<JsonSchema>(this.spec.paths).map(([path, item]): [string, JsonSchema, JsonSchema] => [path, item, out.paths[path]!]),
      ...Object.entries<JsonSchema>(this.spec.webhooks ?? {}).map(([name, item]): [string, JsonSchema, JsonSchema] => [`webhook ${name}`, item, out.webhooks[name]]),
    ];
    for (const [path, item, styledItem] of items) {
      if (typeof item.$ref === 'string') throw new UnstylableContractError(`${path}: a path item by $ref; styling expects the bundle, where they are inlined`);
      if (item.parameters) styledItem.parameters = item.parameters.map((p: JsonSchema) => this.parameter(p));
      for (const method of HTTP_METHODS) {
        const op = item[method] as JsonSchema | undefined;
        if (!op) continue;
        const where = `${method.toUpperCase()} ${path}`;
        if (op.callbacks) throw new UnstylableContractError(`${where}: callbacks are not styled`);
        const styledOp = styledItem[method]!;
        if (op.parameters) styledOp.parameters = op.parameters.map((p: JsonSchema) => this.parameter(p));
        if (op.requestBody) styledOp.requestBody = this.withContent(op.requestBody, `${where} request body`);
        for (const [status, response] of Object.entries<JsonSchema>(op.responses ?? {})) {
          styledOp.responses[status] = this.withContent(response, `${where} ${status}`);
        }
      }
    }
    out.info.description = `${this.preamble()}\n\n${out.info.description ?? ''}`;
    // Parts left as they were are still the source's objects: copy before rewriting prose in place.
    const result = structuredClone(out);
    this.styleProse(result);
    return result;
  }

  /** A response or request body: its media types' schemas and examples; `$ref`s are styled where they point. */
  private withContent(holder: JsonSchema, where: string): JsonSchema {
    if (typeof holder.$ref === 'string') return holder;
    const out = { ...holder };
    if (!holder.content) return out;
    out.content = {};
    for (const [type, media] of Object.entries<JsonSchema>(holder.content)) {
      const styled: JsonSchema = { ...media };
      if (media.schema) styled.schema = this.schema(media.schema, `${where} ${type}`);
      if ('example' in media) styled.example = this.instance(media.example, media.schema);
      if (media.examples) {
        styled.examples = {};
        for (const [name, example] of Object.entries<JsonSchema>(media.examples)) {
          if (typeof example.$ref === 'string') throw new UnstylableContractError(`${where}: example ${name} is a $ref; write it inline`);
          styled.examples[name] = { ...example, value: this.instance(example.value, media.schema) };
        }
      }
      out.content[type] = styled;
    }
    return out;
  }

  /** A schema with its property names and `required` entries styled, recursively. */
  private schema(schema: JsonSchema, where: string): JsonSchema {
    if (schema === null || typeof schema !== 'object') return schema;
    // Keys fixed by a standard (SCIM): the same schema in every style (inflection.ts, FIXED_KEYS).
    if (hasFixedKeys(schema)) return schema;
    for (const keyword of UNSUPPORTED) {
      if (keyword in schema) throw new UnstylableContractError(`${where} uses ${keyword}, which KeyInflector (src/contract/inflection.ts) does not follow: teach it first`);
    }
    const out: JsonSchema = { ...schema };
    if (schema.properties) {
      out.properties = {};
      // No two names can clash: each styled name reads back to its own (key() checks it).
      for (const [name, sub] of Object.entries<JsonSchema>(schema.properties)) out.properties[this.key(name, where)] = this.schema(sub, `${where}.${name}`);
    }
    if (Array.isArray(schema.required)) out.required = schema.required.map((name: string) => this.key(name, where));
    for (const keyword of SUBSCHEMA) {
      if (schema[keyword] && typeof schema[keyword] === 'object') out[keyword] = this.schema(schema[keyword], `${where}.${keyword}`);
    }
    for (const keyword of SUBSCHEMA_LISTS) {
      if (Array.isArray(schema[keyword])) out[keyword] = schema[keyword].map((sub: JsonSchema, i: number) => this.schema(sub, `${where}.${keyword}[${i}]`));
    }
    for (const keyword of INSTANCE) if (keyword in schema) out[keyword] = this.instance(schema[keyword], schema);
    if (Array.isArray(schema.examples)) out.examples = schema.examples.map((value: unknown) => this.instance(value, schema));
    if (Array.isArray(schema.enum)) out.enum = schema.enum.map((value: unknown) => this.instance(value, schema));
    return out;
  }

  /** A property name in the style; it must read back to itself, or the service could not accept it. */
  private key(name: string, where: string): string {
    const styled = styleKey(name, this.style);
    if (unstyleKey(styled) !== name) {
      throw new UnstylableContractError(`${where}: property ${name} is ${styled} in ${this.style}, which reads back as ${unstyleKey(styled)}; rename it`);
    }
    return styled;
  }

  /** A value described by `schema` (an example): the keys the inflector would style are styled, nothing else. */
  private instance(value: unknown, schema: JsonSchema | undefined): unknown {
    return this.inflector.toStyle(value, schema, this.style);
  }

  /** The inflection header describes this document's style: the value to send, and its default. */
  private parameter(parameter: JsonSchema): JsonSchema {
    if (typeof parameter.$ref === 'string' || parameter.name !== INFLECTION_HEADER || parameter.in !== 'header') return parameter;
    const style = this.style;
    return {
      ...parameter,
      description:
        `This document describes the ${STYLE_NAMES[style]} representation: send \`${INFLECTION_HEADER}: ${style}\` with every ` +
        `request. Its default here is \`${style}\`, so that generated clients send it; the service itself answers ` +
        '`snake_case` to a request without it (the contract at `/openapi.json`).',
      schema: { ...parameter.schema, enum: [style], default: style },
      example: style,
    };
  }

  /**
   * The contract's prose names body keys in backticks (`next_cursor`): every description names
   * them as this style does. Parameter names stay, and so does every value (examples, defaults).
   */
  private styleProse(node: unknown, isPropertyMap = false): void {
    if (Array.isArray(node)) return node.forEach((item) => this.styleProse(item));
    if (node === null || typeof node !== 'object') return;
    const object = node as JsonSchema;
    for (const [key, child] of Object.entries(object)) {
      if (isPropertyMap) {
        this.styleProse(child);
      } else if (key === 'description' && typeof child === 'string') {
        object[key] = child.replace(/`([a-z][a-z0-9_]*)`/g, (whole, name: string) =>
          this.propertyNames.has(name) && !this.parameterNames.has(name) ? `\`${styleKey(name, this.style)}\`` : whole,
        );
      } else if (!VALUES.has(key)) {
        this.styleProse(child, key === 'properties');
      }
    }
  }

  private preamble(): string {
    const style = this.style;
    return (
      `> **Key style: ${STYLE_NAMES[style]}.** This is the contract as a client sending \`${INFLECTION_HEADER}: ${style}\` ` +
      `sees it: property names, required fields, examples and error bodies are written in ${STYLE_NAMES[style]}; ` +
      'values, and the keys of free-form maps, are as in every style.'
    );
  }

  private collectNames(node: unknown, key?: string): void {
    if (Array.isArray(node)) return node.forEach((item) => this.collectNames(item));
    if (node === null || typeof node !== 'object') return;
    const object = node as JsonSchema;
    if (hasFixedKeys(object)) return;
    if (key !== 'properties' && object.properties && typeof object.properties === 'object') {
      for (const name of Object.keys(object.properties)) this.propertyNames.add(name);
    }
    if (typeof object.in === 'string' && typeof object.name === 'string') this.parameterNames.add(object.name);
    for (const [childKey, child] of Object.entries(object)) this.collectNames(child, childKey);
  }
}
