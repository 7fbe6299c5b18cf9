// The key styles of x-api-inflection: clients choose the key style of JSON bodies. The service
// works in snake_case; bodies are converted at the edge (src/http), guided by the contract's
// schemas so that only declared property names change, and the styled contracts are derived by the
// same rule (styled.ts). Values, and the keys of free-form maps, are never touched.
//
// Reading is strict, the same under every style: a body is refused (400 validation_failed) when
// it names JavaScript's prototype machinery (`__proto__`, `constructor`, `prototype`), which a
// plain object would not keep as data, or when two of its keys mean the same property
// (`first_name` and `firstName` under camel, or one name twice), since one would silently win.
import { camelCase, kebabCase, pascalCase, snakeCase } from 'change-case';
import type { components } from '../../generated/openapi.js';
import { validationFailed, type DomainError } from '../errors.js';
import { deref, type JsonSchema, type OpenApiDocument } from './spec.js';

type Problem = components['schemas']['Problem'];

export const INFLECTION_HEADER = 'x-api-inflection';
export const INFLECTIONS = ['camel', 'dash', 'snake', 'pascal'] as const;
export type Inflection = (typeof INFLECTIONS)[number];
export const DEFAULT_INFLECTION: Inflection = 'snake';

/**
 * No contract body is nested this deep. Past it, values are passed through untouched (the
 * validator refuses them), so a client's deep nest cannot exhaust the stack of the walk.
 */
const MAX_WALK_DEPTH = 64;

const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A schema marked `x-inflection: none` is a body whose keys a standard fixes (SCIM's, RFC 7643 and
 * 7644): it is read and answered as written in every style, and the styled contracts keep it as it
 * is (styled.ts). Forbidden keys are still refused in it.
 */
export const FIXED_KEYS = 'x-inflection';
export const hasFixedKeys = (schema: JsonSchema | undefined): boolean => schema?.[FIXED_KEYS] === 'none';
/** A list marked `x-inflection: names` holds property names (an event's `changed_fields`): its strings are styled as the keys they name. */
const namesKeys = (schema: JsonSchema | undefined): boolean => schema?.[FIXED_KEYS] === 'names';

const STYLE: Record<Inflection, (snake: string) => string> = {
  camel: (key) => camelCase(key),
  dash: (key) => kebabCase(key),
  snake: (key) => key,
  pascal: (key) => pascalCase(key),
};

/** A declared (snake_case) property name as written in `style`: the one rule, for bodies and for the styled contracts. */
export function styleKey(snake: string, style: Inflection): string {
  return STYLE[style](snake);
}

/** A key written in any style, read back as the declared snake_case name. */
export function unstyleKey(key: string): string {
  return snakeCase(key);
}

/** A body refused before validation, in the validator's shape (location in snake_case, styled when written). */
export function invalidBodyKey(path: readonly (string | number)[], message: string, errorCode: string): DomainError {
  return validationFailed([{ location: ['request', 'body', ...path].join('/'), message, error_code: errorCode }]);
}

const forbiddenKey = (path: readonly (string | number)[]) =>
  invalidBodyKey(path, 'is not accepted as a key (it names JavaScript object machinery)', 'forbidden_key');

interface ObjectShape {
  /** Declared property name (snake) -> its schema. */
  properties: Map<string, JsonSchema | undefined>;
  /** Schema of the values of undeclared keys (a free-form map), if the object allows them. */
  additional: JsonSchema | undefined | true;
}

type Path = (string | number)[];

/** Converts body keys between snake_case and a client style, walking the body along its schema. */
export class KeyInflector {
  private readonly shapes = new WeakMap<JsonSchema, ObjectShape>();
  private readonly fromSnake = new Map<string, string>();

  constructor(private readonly spec: OpenApiDocument) {}

  /** Canonical snake body -> the client's style. */
  toStyle(body: unknown, schema: JsonSchema | undefined, style: Inflection): unknown {
    if (style === 'snake') return body;
    return this.walkOut(body, schema, style, 0);
  }

  /**
   * Client-style body -> canonical snake, before validation, refusing forbidden and duplicate
   * keys (400 validation_failed). Unknown keys are kept as sent, for the validator to refuse.
   */
  toSnake(body: unknown, schema: JsonSchema | undefined, style: Inflection): unknown {
    if (style === 'snake') {
      assertNoForbiddenKeys(body, []);
      return body;
    }
    return this.walkIn(body, schema, style, [], 0);
  }

  /** A path of the body as the client wrote it -> the same path in snake_case. */
  pathToSnake(path: readonly (string | number)[], schema: JsonSchema | undefined, style: Inflection): Path {
    return this.mapPath(path, schema, (key) => (style === 'snake' ? key : unstyleKey(key)), (key) => key);
  }

  /**
   * A problem document in the client's style: its keys, and the body paths it names (in
   * `errors[].location`, in the property a message quotes, in the detail made of them).
   */
  problemToStyle(problem: Problem, requestBodySchema: JsonSchema | undefined, style: Inflection): unknown {
    if (style === 'snake') return problem;
    const styled: Problem = { ...problem };
    if (problem.errors) {
      styled.errors = problem.errors.map((error) => {
        const location = this.locationToStyle(error.location, requestBodySchema, style);
        const [from, to] = [error.location.split('/').at(-1), location.split('/').at(-1)];
        const message = from && to && from !== to ? error.message.split(`'${from}'`).join(`'${to}'`) : error.message;
        return { ...error, location, message };
      });
      // The validator's detail is its field errors joined: rebuild it from the styled ones.
      const joined = (errors: Problem['errors'] = []) => errors.map((e) => `${e.location} ${e.message}`).join('; ');
      if (problem.detail === joined(problem.errors)) styled.detail = joined(styled.errors);
    }
    return this.toStyle(styled, { $ref: '#/components/schemas/Problem' }, style);
  }

  private locationToStyle(location: string, schema: JsonSchema | undefined, style: Inflection): string {
    const prefix = 'request/body/';
    if (!location.startsWith(prefix) || !schema) return location;
    const path = this.mapPath(location.slice(prefix.length).split('/'), schema, (key) => key, (key) => this.styled(key, style));
    return prefix + path.join('/');
  }

  /** Follows a path along the schema: declared names become `rename(canonical)`, others stay. */
  private mapPath(path: readonly (string | number)[], rawSchema: JsonSchema | undefined, toCanonical: (k: string) => string, rename: (k: string) => string): Path {
    const result: Path = [];
    let schema = rawSchema;
    for (const segment of path) {
      const resolved = deref(this.spec, schema);
      if (resolved?.items && /^\d+$/.test(String(segment))) {
        result.push(segment);
        schema = resolved.items as JsonSchema;
        continue;
      }
      const shape = this.shape(schema);
      const canonical = toCanonical(String(segment));
      if (shape?.properties.has(canonical)) {
        result.push(rename(canonical));
        schema = shape.properties.get(canonical);
      } else {
        result.push(segment);
        schema = shape?.additional === true ? undefined : shape?.additional;
      }
    }
    return result;
  }

  private styled(key: string, style: Inflection): string {
    const cacheKey = `${style}:${key}`;
    let result = this.fromSnake.get(cacheKey);
    if (result === undefined) {
      result = styleKey(key, style);
      this.fromSnake.set(cacheKey, result);
    }
    return result;
  }

  private walkOut(value: unknown, rawSchema: JsonSchema | undefined, style: Inflection, depth: number): unknown {
    if (depth > MAX_WALK_DEPTH || hasFixedKeys(deref(this.spec, rawSchema))) return value;
    if (Array.isArray(value)) {
      if (namesKeys(deref(this.spec, rawSchema))) return value.map((item) => (typeof item === 'string' ? this.styled(item, style) : item));
      const itemSchema = deref(this.spec, rawSchema)?.items as JsonSchema | undefined;
      return value.map((item) => this.walkOut(item, itemSchema, style, depth + 1));
    }
    if (value === null || typeof value !== 'object') return value;
    const shape = this.shape(rawSchema);
    const result: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      // Without a schema (no contract for this body), every key is a property name.
      if (shape === undefined || shape.properties.has(key)) {
        result[this.styled(key, style)] = this.walkOut(child, shape?.properties.get(key), style, depth + 1);
      } else {
        // A free-form map's own keys are data: kept as sent; its values are walked with their schema.
        const valueSchema = shape.additional === true ? undefined : shape.additional;
        result[key] = valueSchema ? this.walkOut(child, valueSchema, style, depth + 1) : child;
      }
    }
    return result;
  }

  private walkIn(value: unknown, rawSchema: JsonSchema | undefined, style: Inflection, path: Path, depth: number): unknown {
    if (depth > MAX_WALK_DEPTH) return value;
    if (hasFixedKeys(deref(this.spec, rawSchema))) {
      assertNoForbiddenKeys(value, path);
      return value;
    }
    if (Array.isArray(value)) {
      const itemSchema = deref(this.spec, rawSchema)?.items as JsonSchema | undefined;
      return value.map((item, index) => this.walkIn(item, itemSchema, style, [...path, index], depth + 1));
    }
    if (value === null || typeof value !== 'object') return value;
    const shape = this.shape(rawSchema);
    const result: Record<string, unknown> = {};
    const sentAs = new Map<string, string>();
    for (const [key, child] of Object.entries(value)) {
      if (FORBIDDEN_KEYS.has(key)) throw forbiddenKey([...path, key]);
      const canonical = unstyleKey(key);
      // Without a schema (no contract for this body), every key is a property name.
      const declared = shape === undefined || shape.properties.has(canonical);
      const name = declared ? canonical : key;
      const earlier = sentAs.get(name);
      if (earlier !== undefined) {
        throw invalidBodyKey([...path, name], `is given twice, as ${earlier} and as ${key}`, 'duplicate_key');
      }
      sentAs.set(name, key);
      if (declared) {
        result[name] = this.walkIn(child, shape?.properties.get(canonical), style, [...path, name], depth + 1);
      } else {
        // A free-form map's own keys are data: kept as sent; its values are walked with their schema.
        const valueSchema = shape?.additional === true ? undefined : shape?.additional;
        if (valueSchema) result[key] = this.walkIn(child, valueSchema, style, [...path, key], depth + 1);
        else {
          assertNoForbiddenKeys(child, [...path, key]);
          result[key] = child;
        }
      }
    }
    return result;
  }

  private shape(rawSchema: JsonSchema | undefined): ObjectShape | undefined {
    const schema = deref(this.spec, rawSchema);
    if (!schema) return undefined;
    let shape = this.shapes.get(schema);
    if (!shape) {
      shape = { properties: new Map(), additional: undefined };
      this.collect(schema, shape);
      this.shapes.set(schema, shape);
    }
    return shape;
  }

  private collect(rawSchema: JsonSchema, shape: ObjectShape): void {
    const schema = deref(this.spec, rawSchema);
    if (!schema) return;
    for (const [name, sub] of Object.entries<JsonSchema>(schema.properties ?? {})) shape.properties.set(name, sub);
    if (schema.additionalProperties === true) shape.additional = true;
    else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') shape.additional = schema.additionalProperties;
    for (const group of ['allOf', 'anyOf', 'oneOf'] as const) {
      for (const sub of (schema[group] as JsonSchema[] | undefined) ?? []) this.collect(sub, shape);
    }
  }
}

/** Refuses a forbidden key anywhere in a value kept as sent. */
export function assertNoForbiddenKeys(value: unknown, path: Path, depth = 0): void {
  if (depth > MAX_WALK_DEPTH || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => assertNoForbiddenKeys(item, [...path, index], depth + 1));
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    if (FORBIDDEN_KEYS.has(key)) throw forbiddenKey([...path, key]);
    assertNoForbiddenKeys(child, [...path, key], depth + 1);
  }
}
