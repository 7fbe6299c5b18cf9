// The x-api-inflection header: clients choose the key style of JSON bodies. The service works in
// snake_case; bodies are converted at the edge, guided by the contract's schemas so that only
// declared property names change. Values, and the keys of free-form maps, are never touched.
import { camelCase, kebabCase, pascalCase, snakeCase } from 'change-case';
import { ProblemError } from './problem.js';
import { deref, type JsonSchema, type OpenApiDocument } from '../contract/spec.js';

export const INFLECTION_HEADER = 'x-api-inflection';
export const INFLECTIONS = ['camel', 'dash', 'snake', 'pascal'] as const;
export type Inflection = (typeof INFLECTIONS)[number];
export const DEFAULT_INFLECTION: Inflection = 'snake';

/**
 * No contract body is nested this deep. Past it, values are passed through untouched (the
 * validator refuses them), so a client's deep nest cannot exhaust the stack of the walk.
 */
const MAX_WALK_DEPTH = 64;

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

/** Reads the header; a missing one means snake, an unknown one is a 400 listing the allowed values. */
export function parseInflection(value: string | string[] | undefined, source = `The ${INFLECTION_HEADER} header`): Inflection {
  if (value === undefined || value === '') return DEFAULT_INFLECTION;
  const candidate = Array.isArray(value) ? value[0] : value;
  const normalised = candidate?.trim().toLowerCase();
  if ((INFLECTIONS as readonly string[]).includes(normalised ?? '')) return normalised as Inflection;
  throw new ProblemError(
    400,
    'invalid_inflection',
    `${source} must be one of ${INFLECTIONS.join(', ')}.`,
    { allowed_values: [...INFLECTIONS] },
  );
}

interface ObjectShape {
  /** Declared property name (snake) -> its schema. */
  properties: Map<string, JsonSchema | undefined>;
  /** Schema of the values of undeclared keys (a free-form map), if the object allows them. */
  additional: JsonSchema | undefined | true;
}

/** Converts body keys between snake_case and a client style, walking the body along its schema. */
export class KeyInflector {
  private readonly shapes = new WeakMap<JsonSchema, ObjectShape>();
  private readonly fromSnake = new Map<string, string>();

  constructor(private readonly spec: OpenApiDocument) {}

  /** Canonical snake body -> the client's style. */
  toStyle(body: unknown, schema: JsonSchema | undefined, style: Inflection): unknown {
    if (style === 'snake') return body;
    return this.walk(body, schema, (key) => this.styled(key, style), 'out');
  }

  /** Client-style body -> canonical snake, before validation. Unknown keys are kept for the validator to refuse. */
  toSnake(body: unknown, schema: JsonSchema | undefined, style: Inflection): unknown {
    if (style === 'snake') return body;
    return this.walk(body, schema, unstyleKey, 'in');
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

  private walk(value: unknown, rawSchema: JsonSchema | undefined, rename: (k: string) => string, direction: 'in' | 'out', depth = 0): unknown {
    if (depth > MAX_WALK_DEPTH) return value;
    if (Array.isArray(value)) {
      const itemSchema = deref(this.spec, rawSchema)?.items as JsonSchema | undefined;
      return value.map((item) => this.walk(item, itemSchema, rename, direction, depth + 1));
    }
    if (value === null || typeof value !== 'object') return value;
    const shape = this.shape(rawSchema);
    const result: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      // Without a schema (no contract for this body), every key is a property name.
      const canonical = direction === 'out' ? key : rename(key);
      const declared = shape === undefined || shape.properties.has(canonical);
      if (declared) {
        result[direction === 'out' ? rename(key) : canonical] = this.walk(child, shape?.properties.get(canonical), rename, direction, depth + 1);
      } else {
        // A free-form map's own keys are data: kept as sent; its values are walked with their schema.
        const additional = shape?.additional;
        const valueSchema = additional === true ? undefined : additional;
        result[key] = valueSchema ? this.walk(child, valueSchema, rename, direction, depth + 1) : child;
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
